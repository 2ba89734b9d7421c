/**
 * Environment variables as a runtime receives them (plain or `Redacted`), checked and split for
 * the backend: names a shell can export, secrets long enough to mask, and the values of the
 * secrets added to the runtime's mask from now on.
 */
import { Effect, Redacted } from "effect"
import { invalidEnvNames } from "../executor/env.ts"
import { invalidEnvMessage, InvalidEnvVarError } from "../schema/errors.ts"
import { type SecretMask, shortSecretsError } from "../schema/secrets.ts"
import type { EnvValue } from "../services/EnvValue.ts"

/** The variables' plain values, and the names of those given as secrets. */
export interface UnredactedEnv {
  readonly plain: Readonly<Record<string, string>>
  readonly secrets: ReadonlyArray<string>
}

export const unredactedEnv = Effect.fn("Runtime.unredactedEnv")(function*(
  vars: Readonly<Record<string, EnvValue>>,
  mask: SecretMask
) {
  const invalid = invalidEnvNames(vars)
  if (invalid.length > 0) {
    return yield* new InvalidEnvVarError({ names: invalid, message: invalidEnvMessage(invalid) })
  }
  const plain: Record<string, string> = {}
  const secrets: Array<string> = []
  for (const [name, value] of Object.entries(vars)) {
    plain[name] = Redacted.isRedacted(value) ? Redacted.value(value) : value
    if (Redacted.isRedacted(value)) secrets.push(name)
  }
  const short = shortSecretsError(plain, secrets)
  if (short !== undefined) return yield* short
  for (const name of secrets) mask.add(plain[name]!)
  return { plain, secrets } satisfies UnredactedEnv
})
