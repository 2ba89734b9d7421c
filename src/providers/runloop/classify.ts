/**
 * What a failed `@runloop/api-client` call means (services/Driver.ts `Classified`): the SDK's
 * `APIError`s carry the HTTP status, the headers and Runloop's own text (`401 Invalid API key`); a
 * connection error has no status. The text gets what the reason means for the caller where that is
 * not plain.
 */
import { classifyHttp } from "../../hosted/classifyHttp.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"

export const classifyRunloop = classifyHttp({
  statusField: "status",
  // No answer is the connection's; a 403 about a limit is the quota, a 404 about a blueprint a missing image.
  reasonOf: (status, text) =>
    status === undefined
      ? "unavailable"
      : status === 403 && /limit|maximum|quota/i.test(text)
      ? "quota"
      : status === 404 && /blueprint/i.test(text)
      ? "image-missing"
      : reasonOfStatus(status),
  advice: {
    unauthorized: " (Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)",
    quota: " (the account's quota or plan refuses it: shut down devboxes or raise the limits)",
    "rate-limited": " (Runloop's rate limit: still refused after retrying with backoff)"
  }
})
