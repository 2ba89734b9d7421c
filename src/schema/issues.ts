/**
 * Bad options and bad action fields become one line a user can act on: the field and the rule
 * (`Invalid CliRuntime options: noChangeTimeoutSeconds: Expected a value greater than 0`), never Effect's
 * multi-line issue tree or a defect. Values are not echoed: an option may hold a secret.
 */
import { Effect, Schema, SchemaIssue } from "effect"
import { InvalidOptionsError } from "./errors.ts"

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * `issue` as one line: `path: rule` per failure, `; `-separated (no input values).
 * `nameOf` renames a field path for the user (`timeout` → `SANDBOX_TIMEOUT`).
 */
export const formatIssue = (issue: SchemaIssue.Issue, nameOf: (path: string) => string = (path) => path): string =>
  standard(issue).issues.map(({ message, path }) => {
    const at = (path ?? []).map((key) => typeof key === "object" ? String(key.key) : String(key)).join(".")
    return at === "" ? message : `${nameOf(at)}: ${message}`
  }).join("; ")

/** The typed error for `issue` in the options or action named `subject`. */
export const invalidOptions = (subject: string, issue: SchemaIssue.Issue): InvalidOptionsError =>
  new InvalidOptionsError({ message: `Invalid ${subject}: ${formatIssue(issue)}` })

/** Decode `input` as `schema`, failing with a one-line `InvalidOptionsError` naming each bad field. */
export const decodeOptions = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  subject: string
) =>
(input: unknown): Effect.Effect<S["Type"], InvalidOptionsError> =>
  Schema.decodeUnknownEffect(schema)(input, { errors: "all" }).pipe(
    Effect.mapError((error) => invalidOptions(subject, error.issue))
  )

/** Anything a schema class extends: its constructor and the name Effect gave it. */
type SchemaClass = (abstract new(...args: Array<any>) => object) & { readonly identifier: string }

/**
 * `Base` whose constructor throws an `InvalidOptionsError` naming each bad field
 * (`Invalid CmdRunAction: timeout: Expected a value greater than 0`) instead of Effect's generic
 * `Error("Schema validation failed")`, which names none: `new CmdRunAction({ ... })` and
 * `new SandboxConfig({ ... })` are how users write actions and options by hand. Decoding is
 * unchanged (it does not run the checks in the constructor).
 */
export const namingBadFields = <C extends SchemaClass>(Base: C): C => {
  abstract class NamingBadFields extends Base {
    constructor(...args: Array<any>) {
      try {
        super(...args)
      } catch (error) {
        const issue = error instanceof Error ? error.cause : undefined
        throw SchemaIssue.isIssue(issue) ? invalidOptions(Base.identifier, issue) : error
      }
    }
  }
  return NamingBadFields
}
