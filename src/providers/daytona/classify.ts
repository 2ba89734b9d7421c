/**
 * What a failed `@daytonaio/sdk` call means (services/Driver.ts `Classified`). The SDK's errors
 * carry Daytona's HTTP status and response headers and the control plane's own text ("Invalid API
 * key", "Total CPU limit exceeded. Maximum allowed: 10"), to which the text adds what it means for
 * the caller.
 */
import { classifyHttp } from "../../hosted/classifyHttp.ts"
import type { ProviderReason } from "../../schema/errors.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"

/**
 * The reason, told apart where Daytona answers one status for several: its quota is a 403, a
 * missing snapshot a 404, a name already taken a 409 like a state change in progress.
 */
const reasonOf = (status: number | undefined, text: string): ProviderReason => {
  // Daytona answers 409 "Sandbox state change in progress" while a sandbox is between states
  // (starting, stopping, pausing): worth waiting out. A name taken is not.
  const reason = status === 409 && !/already exists/i.test(text) ? "transition" : reasonOfStatus(status)
  if (reason === "forbidden" && /limit|quota/i.test(text)) return "quota"
  return ["not-found", "invalid"].includes(reason) && /^snapshot .*not found/i.test(text) ? "image-missing" : reason
}

export const classifyDaytona = classifyHttp({
  statusField: "statusCode",
  reasonOf,
  advice: {
    unauthorized: " (Daytona refused the API key: check DAYTONA_API_KEY or the `apiKey` option)",
    quota: " (the organisation's quota refuses it: stop or delete sandboxes, or raise the limits)",
    conflict: " (another runtime made this session's sandbox at the same time: attach to it instead)",
    "rate-limited": " (Daytona's rate limit: still refused after retrying with backoff)"
  }
})
