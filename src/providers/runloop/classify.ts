/**
 * What a failed `@runloop/api-client` call means (services/Driver.ts `Classified`): the SDK's
 * `APIError`s carry the HTTP status, the headers and Runloop's own text (`401 Invalid API key`),
 * read structurally so its classes stay out of our types; a connection error has no status. The
 * text gets what the reason means for the caller where that is not plain.
 */
import { Duration } from "effect"
import { reasonOfStatus } from "../../hosted/httpReason.ts"
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"

const ADVICE: Partial<Record<ProviderReason, string>> = {
  unauthorized: " (Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)",
  quota: " (the account's quota or plan refuses it: shut down devboxes or raise the limits)",
  "rate-limited": " (Runloop's rate limit: still refused after retrying with backoff)"
}

/** Runloop's reason: a 403 about a limit is the quota, a 404 about a blueprint a missing image. */
const reasonOf = (status: number | undefined, text: string): ProviderReason =>
  status === undefined
    ? "unavailable"
    : status === 403 && /limit|maximum|quota/i.test(text)
    ? "quota"
    : status === 404 && /blueprint/i.test(text)
    ? "image-missing"
    : reasonOfStatus(status)

export const classifyRunloop = (cause: unknown): Classified => {
  const error = Object(cause) as { status?: unknown; headers?: { get?: (name: string) => string | null } }
  const status = typeof error.status === "number" ? error.status : undefined
  const text = cause instanceof Error ? cause.message : String(cause)
  const reason = reasonOf(status, text)
  const retryAfter = Number(error.headers?.get?.("retry-after") ?? Number.NaN)
  return {
    reason,
    status,
    text: `${text}${ADVICE[reason] ?? ""}`,
    ...(Number.isFinite(retryAfter) ? { retryAfter: Duration.seconds(retryAfter) } : {})
  }
}
