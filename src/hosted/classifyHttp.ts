/**
 * The classifier (services/Driver.ts `classify`) of an SDK whose errors carry an HTTP status and
 * the answer's headers: the status read through schema/httpReason.ts, and what the provider says
 * otherwise (a 403 that is a quota, a 404 that names a missing image) from its own `reasonOf`.
 */
import type { ProviderReason } from "../schema/errors.ts"
import { retryAfterHeader } from "../schema/waitOut.ts"
import type { Classified } from "../services/Driver.ts"

/** What a provider's SDK errors say beyond the status table. */
export interface HttpErrors {
  /** The error's field holding the HTTP status (`status`, `statusCode`). */
  readonly statusField: string
  /** The reason, from the status (none: the request got no answer) and the provider's text. */
  readonly reasonOf: (status: number | undefined, text: string) => ProviderReason
  /** What a reason means for the caller, added after the provider's text where that is not plain. */
  readonly advice: Partial<Record<ProviderReason, string>>
}

/**
 * A response header as an SDK error keeps it: a Fetch `Headers` (its `get`), or a plain record of
 * lower-case names (Stainless clients, Runloop's: a Proxy over `Object.fromEntries`, where `get` is
 * just a missing key).
 */
export const header = (headers: unknown, name: string): string | undefined => {
  if (typeof headers !== "object" || headers === null) return undefined
  const get = (headers as { get?: unknown }).get
  const value = typeof get === "function"
    ? get.call(headers, name)
    : (headers as Record<string, unknown>)[name]
  return typeof value === "string" ? value : undefined
}

/**
 * The classifier of an SDK whose errors carry the HTTP status and the answer's headers, read
 * structurally so its classes stay out of our types: the reason, the provider's own text with the
 * advice, and the `Retry-After` (in seconds) the answer carries.
 */
export const classifyHttp = (errors: HttpErrors) => (cause: unknown): Classified => {
  const error = Object(cause) as Record<string, unknown> & { headers?: unknown }
  const field = error[errors.statusField]
  const status = typeof field === "number" ? field : undefined
  const text = cause instanceof Error ? cause.message : String(cause)
  const reason = errors.reasonOf(status, text)
  const retryAfter = retryAfterHeader(header(error.headers, "retry-after"))
  return {
    reason,
    status,
    text: `${text}${errors.advice[reason] ?? ""}`,
    ...(retryAfter === undefined ? {} : { retryAfter })
  }
}
