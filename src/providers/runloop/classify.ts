/**
 * What a failed `@runloop/api-client` call means (services/Driver.ts `Classified`): the SDK's
 * `APIError`s carry the HTTP status, the headers and Runloop's own text (`401 Invalid API key`); a
 * connection error has no status. The text gets what the reason means for the caller where that is
 * not plain.
 *
 * The driver turns the SDK's own retries off (`maxRetries: 0`) so the hosted runtime's
 * `providerRetry` is the only schedule; so everything the SDK would have retried is classified as
 * worth waiting out here: no answer (a connection error), 408 (Runloop's long polls time out
 * with it), 409 (its lock time-outs), 429, any 5xx, and an answer whose `x-should-retry: true`
 * says so.
 */
import { classifyHttp, header } from "../../hosted/classifyHttp.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"
import type { Classified } from "../../services/Driver.ts"

const classifyStatus = classifyHttp({
  statusField: "status",
  // No answer is the connection's; a 403 about a limit is the quota, a 404 about a blueprint a missing image.
  // The SDK's own wait for a state throws a plain Error when the devbox settled elsewhere (failed, shut down).
  reasonOf: (status, text) =>
    status === undefined
      ? /^Devbox \S+ is in non-\w+ state/.test(text) ? "unknown" : "unavailable"
      : status === 403 && /limit|maximum|quota/i.test(text)
      ? "quota"
      : status === 404 && /blueprint/i.test(text)
      ? "image-missing"
      : reasonOfStatus(status, { 408: "unavailable", 409: "transition" }),
  advice: {
    unauthorized: " (Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)",
    quota: " (the account's quota or plan refuses it: shut down devboxes or raise the limits)",
    "rate-limited": " (Runloop's rate limit: still refused after retrying with backoff)"
  }
})

export const classifyRunloop = (cause: unknown): Classified => {
  const classified = classifyStatus(cause)
  const told = header((Object(cause) as { headers?: unknown }).headers, "x-should-retry")
  return told === "true" && classified.reason !== "rate-limited" && classified.reason !== "transition"
    ? { ...classified, reason: "unavailable" }
    : classified
}
