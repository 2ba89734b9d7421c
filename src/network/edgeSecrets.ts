/**
 * The `secrets` option (services/RuntimeOptions.ts, docs/secrets.md): secrets bound to destinations,
 * put on requests at the sandbox's edge so that the sandbox itself only ever holds a placeholder.
 * Checked here once, each bad field an InvalidOptionsError naming it (never the value), before
 * anything is made; a runtime that has no edge of its own to put them on refuses the option whole
 * (hosted/secretsOption.ts, Cli and Local), rather than put the value in the sandbox's environment.
 */
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { InvalidOptionsError } from "../schema/errors.ts"
import { compileRules } from "./allows.ts"
import { type BoundSecret, SECRET_SLOT } from "./injection.ts"
import { type EgressPolicy, type EgressRule, parseRule } from "./policy.ts"

/** One secret as callers bind it. */
export interface EdgeSecret {
  /** The real value: never in the sandbox, nor in any message. */
  readonly value: Redacted.Redacted<string>
  /**
   * Where it may go: host names (`api.github.com`), domains (`*.github.com`: its subdomains) or
   * addresses (`10.1.2.3`), each also allowed by the `network` option.
   */
  readonly hosts: ReadonlyArray<string>
  /**
   * The environment variable the sandbox sees: it holds a placeholder (random, per sandbox), which
   * the edge replaces by the value in requests to `hosts` (headers, path and query) and nowhere else.
   */
  readonly env?: string
  /** A header the edge sets on requests to `hosts`: `value` is a template, `{secret}` the value (default `{secret}`). */
  readonly header?: { readonly name: string; readonly value?: string }
}

/** A secret checked: its hosts parsed, its header's template settled; no placeholder yet (one per sandbox). */
export interface ParsedSecret {
  readonly value: Redacted.Redacted<string>
  readonly hosts: ReadonlyArray<EgressRule>
  readonly env: string | undefined
  readonly header: { readonly name: string; readonly template: string } | undefined
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** A shell-usable environment variable name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Characters that would end a header line: neither a value nor a template may hold one. */
const LINE_BREAK = /[\r\n\0]/

const invalid = (runtime: string, field: string, message: string) =>
  new InvalidOptionsError({ message: `${runtime} options: ${field}: ${message}` })

/** Whether the policy lets a bound host through (a domain: only a domain rule at or above it does). */
const allowedBy = (policy: Extract<EgressPolicy, { _tag: "AllowOnly" }>, host: EgressRule): boolean => {
  const allows = compileRules(policy.rules)
  if (host._tag === "Host") return allows.name(host.host)
  if (host._tag === "Cidr") return allows.address(host.address)
  return policy.rules.some((rule) =>
    rule._tag === "Domain" && (host.suffix === rule.suffix || host.suffix.endsWith(`.${rule.suffix}`))
  )
}

const parseOne = (
  runtime: string,
  policy: Extract<EgressPolicy, { _tag: "AllowOnly" }>,
  secret: EdgeSecret,
  at: string
): Effect.Effect<ParsedSecret, InvalidOptionsError> =>
  Effect.gen(function*() {
    if (!Redacted.isRedacted(secret.value)) {
      return yield* invalid(runtime, `${at}.value`, "expected a Redacted string (Redacted.make(...)).")
    }
    const value = Redacted.value(secret.value)
    if (typeof value !== "string" || value === "") return yield* invalid(runtime, `${at}.value`, "is empty.")
    if (LINE_BREAK.test(value)) {
      return yield* invalid(runtime, `${at}.value`, "holds a line break or NUL, which no header can carry.")
    }
    if (!Array.isArray(secret.hosts) || secret.hosts.length === 0) {
      return yield* invalid(runtime, `${at}.hosts`, "expected at least one host the secret is bound to.")
    }
    const hosts: Array<EgressRule> = []
    for (const text of secret.hosts) {
      const rule = typeof text === "string" ? parseRule(text) : undefined
      const single = rule !== undefined && (rule._tag !== "Cidr" || rule.prefix === (rule.family === "ipv4" ? 32 : 128))
      if (!single) {
        return yield* invalid(
          runtime,
          `${at}.hosts`,
          `${JSON.stringify(text)} is not a host name, *.domain or IP address (a secret is bound to hosts, not blocks).`
        )
      }
      if (!allowedBy(policy, rule)) {
        return yield* invalid(
          runtime,
          `${at}.hosts`,
          `${JSON.stringify(text)} is not allowed by the network option's allowOnly, so nothing could reach it.`
        )
      }
      hosts.push(rule)
    }
    if (secret.env === undefined && secret.header === undefined) {
      return yield* invalid(runtime, at, "expected env (a placeholder variable), header, or both.")
    }
    if (secret.env !== undefined && (typeof secret.env !== "string" || !ENV_NAME.test(secret.env))) {
      return yield* invalid(runtime, `${at}.env`, `${JSON.stringify(secret.env)} is not an environment variable name.`)
    }
    let header: ParsedSecret["header"]
    if (secret.header !== undefined) {
      const { name } = secret.header
      if (typeof name !== "string" || !HEADER_NAME.test(name)) {
        return yield* invalid(runtime, `${at}.header.name`, `${JSON.stringify(name)} is not an HTTP header name.`)
      }
      const template = secret.header.value ?? SECRET_SLOT
      if (typeof template !== "string" || !template.includes(SECRET_SLOT) || LINE_BREAK.test(template)) {
        return yield* invalid(
          runtime,
          `${at}.header.value`,
          `expected one line holding ${SECRET_SLOT} (e.g. "Bearer ${SECRET_SLOT}").`
        )
      }
      header = { name, template }
    }
    return { value: secret.value, hosts, env: secret.env, header }
  })

/**
 * The option checked against the network policy it needs (an allow list: the edge that puts the
 * secrets on requests is the allow list's proxy, and a bound host it does not allow is unreachable).
 * Nothing: undefined or an empty list.
 */
export const parseEdgeSecrets = (
  runtime: string,
  secrets: ReadonlyArray<EdgeSecret> | undefined,
  policy: EgressPolicy | undefined
): Effect.Effect<ReadonlyArray<ParsedSecret>, InvalidOptionsError> =>
  Effect.gen(function*() {
    if (secrets === undefined) return []
    if (!Array.isArray(secrets)) return yield* invalid(runtime, "secrets", "expected a list of bound secrets.")
    if (secrets.length === 0) return []
    if (policy?._tag !== "AllowOnly") {
      return yield* invalid(
        runtime,
        "secrets",
        "need network: { allowOnly: [...] } allowing the bound hosts: the allow list's egress proxy is where " +
          "they are put on requests."
      )
    }
    const parsed = yield* Effect.forEach(secrets, (secret, i) => parseOne(runtime, policy, secret, `secrets[${i}]`))
    const envs = parsed.flatMap((secret) => secret.env === undefined ? [] : [secret.env])
    const twice = envs.find((env, i) => envs.indexOf(env) !== i)
    if (twice !== undefined) return yield* invalid(runtime, "secrets", `two secrets name the variable ${twice}.`)
    return parsed
  })

/**
 * A secret refused whole by a runtime that has no edge of its own to put it on: an
 * InvalidOptionsError saying why, rather than the value in the sandbox's environment.
 */
export const refuseSecrets = (
  runtime: string,
  secrets: ReadonlyArray<EdgeSecret> | undefined,
  why: string
): Effect.Effect<void, InvalidOptionsError> =>
  secrets === undefined || (Array.isArray(secrets) && secrets.length === 0)
    ? Effect.void
    : Effect.fail(invalid(runtime, "secrets", `${runtime} cannot keep a secret out of its sandbox: ${why}.`))

/** Why Cli and Local refuse secrets: no proxy of theirs stands between their commands and a destination. */
export const LOCAL_SECRETS_REFUSAL = "its commands run on this host's own network, with no edge of the runtime's " +
  "between them and a destination to put the value on (use DockerRuntime with network: { allowOnly })"

/** A placeholder nobody can guess: per sandbox and secret, recognisable in a log as one. */
const placeholder = () => `effect-sandbox-secret-${randomBytes(24).toString("base64url")}`

/**
 * The secrets of one sandbox: each with a placeholder of its own, and the variables that hold them
 * (the sandbox's environment: placeholders only).
 */
export const bindSecrets = (
  secrets: ReadonlyArray<ParsedSecret>
): { readonly bound: ReadonlyArray<BoundSecret>; readonly env: Readonly<Record<string, string>> } => {
  const bound = secrets.map((secret): BoundSecret => ({
    hosts: secret.hosts,
    placeholder: placeholder(),
    value: Redacted.value(secret.value),
    ...(secret.header === undefined ? {} : { header: secret.header })
  }))
  const env = Object.fromEntries(
    secrets.flatMap((secret, i) => secret.env === undefined ? [] : [[secret.env, bound[i]!.placeholder]])
  )
  return { bound, env }
}
