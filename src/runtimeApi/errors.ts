/**
 * The one error a runtime API handler fails with: the HTTP status and the `detail` the client
 * reads (FastAPI's shape, as OpenHands' client expects), so every refusal says what was wrong.
 */
import { Data } from "effect"
import { SecretMask } from "../schema/secrets.ts"

export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly detail: string
}> {}

export const notFound = (what: string) => new ApiError({ status: 404, detail: `${what} not found` })

/** Values shorter than this are not masked in a backend's message (`1`, `true` would garble it). */
const MASKED_FROM_LENGTH = 6

/**
 * A backend's failure (the engine, the Kubernetes API) as a 500 carrying its message, with
 * `secrets` masked: a refusal may quote what it was given, and a request's `environment` holds
 * secrets (the engine's refusal of a bad entry quoted its value).
 */
export const internalError = (secrets: Iterable<string> = []) => {
  const mask = new SecretMask()
  for (const secret of secrets) if (secret.length >= MASKED_FROM_LENGTH) mask.add(secret)
  return (error: { readonly message: string }) => new ApiError({ status: 500, detail: mask.text(error.message) })
}
