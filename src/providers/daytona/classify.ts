/**
 * What a failed `@daytonaio/sdk` call means (services/Driver.ts `Classified`). The SDK's errors
 * carry Daytona's HTTP status and response headers (read structurally, so its types stay out of
 * ours) and the control plane's own text ("Invalid API key", "Total CPU limit exceeded. Maximum
 * allowed: 10"), to which the text adds what it means for the caller.
 */
import { Duration } from "effect"
import { reasonOfStatus } from "../../hosted/httpReason.ts"
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"

/** What a reason means for the caller, after Daytona's own text. */
const ADVICE: Partial<Record<ProviderReason, string>> = {
  unauthorized: " (Daytona refused the API key: check DAYTONA_API_KEY or the `apiKey` option)",
  quota: " (the organisation's quota refuses it: stop or delete sandboxes, or raise the limits)",
  "rate-limited": " (Daytona's rate limit: still refused after retrying with backoff)"
}

/** The reason, told apart where Daytona answers one status for several: its quota is a 403, a missing snapshot a 404. */
const reasonOf = (status: number | undefined, text: string): ProviderReason => {
  // Daytona answers 409 while a sandbox is between states (starting, stopping): worth waiting out.
  const reason = status === 409 ? "transition" : reasonOfStatus(status)
  if (reason === "forbidden" && /limit|quota/i.test(text)) return "quota"
  return ["not-found", "invalid"].includes(reason) && /^snapshot .*not found/i.test(text) ? "image-missing" : reason
}

export const classifyDaytona = (cause: unknown): Classified => {
  const error = (typeof cause === "object" && cause !== null ? cause : {}) as {
    readonly statusCode?: number
    readonly headers?: { readonly get?: (name: string) => unknown }
  }
  const text = cause instanceof Error ? cause.message : String(cause)
  const reason = reasonOf(error.statusCode, text)
  const retryAfter = Number(error.headers?.get?.("retry-after"))
  return {
    reason,
    status: error.statusCode,
    text: `${text}${ADVICE[reason] ?? ""}`,
    retryAfter: retryAfter > 0 ? Duration.seconds(retryAfter) : undefined
  }
}
