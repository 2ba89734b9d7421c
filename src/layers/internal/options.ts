/**
 * The options every runtime layer shares, checked before anything starts: a bad value is a typed
 * `InvalidOptionsError` with one line naming the option, not a server that silently falls back to
 * its default (a negative no-change timeout became 10 s) or a shell that returns at once.
 */
import { Schema } from "effect"
import { decodeOptions } from "../../schema/issues.ts"

const RuntimeOptions = Schema.Struct({
  noChangeTimeoutSeconds: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))),
  pidsLimit: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)))
})

/** Fails with `Invalid <subject>: noChangeTimeoutSeconds: Expected a value greater than 0` and the like. */
export const checkRuntimeOptions = (subject: string, options: object) => decodeOptions(RuntimeOptions, subject)(options)
