/**
 * What a failed `e2b` SDK call means (services/Driver.ts `Classified`): the SDK names its errors by
 * class (read structurally, so its types stay out of ours) and puts E2B's HTTP status in the text
 * of the others ("409: ...", "500: ..."). Its classes drop the answer's headers, so no
 * `Retry-After` reaches us (the SDK waits out a 429's itself: driver.ts).
 */
import type { ProviderReason } from "../../schema/errors.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"
import type { Classified } from "../../services/Driver.ts"

const BY_NAME: Readonly<Record<string, ProviderReason>> = {
  AuthenticationError: "unauthorized",
  RateLimitError: "rate-limited",
  // Every 503: "Failed to place sandbox: not enough capacity ..., please retry shortly".
  ServiceBusyError: "unavailable",
  NotFoundError: "not-found",
  SandboxNotFoundError: "not-found",
  TemplateError: "image-missing",
  TimeoutError: "timeout",
  InvalidArgumentError: "invalid",
  NotEnoughSpaceError: "quota"
}

/** E2B's status where the SDK's text starts with it. */
const statusIn = (text: string): number | undefined => {
  const match = /^(\d{3})\b/.exec(text)
  return match === null ? undefined : Number(match[1])
}

export const classifyE2B = (cause: unknown): Classified => {
  const name = (cause as { name?: string } | null)?.name ?? ""
  const text = cause instanceof Error ? cause.message : String(cause)
  const status = statusIn(text)
  // E2B answers 409 while a sandbox is between states (pausing, resuming): worth waiting out.
  const reason = BY_NAME[name] ??
    (status === 409 ? "transition" : reasonOfStatus(status))
  return { reason, status, text }
}
