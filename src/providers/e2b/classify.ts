/**
 * What a failed `e2b` SDK call means (services/Driver.ts `Classified`): the SDK names its errors by
 * class (read structurally, so its types stay out of ours) and puts E2B's HTTP status in the text
 * of the others ("409: ...", "503: no capacity ...").
 */
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"

const BY_NAME: Readonly<Record<string, ProviderReason>> = {
  AuthenticationError: "unauthorized",
  RateLimitError: "rate-limited",
  NotFoundError: "not-found",
  SandboxNotFoundError: "not-found",
  TemplateError: "image-missing",
  TimeoutError: "timeout",
  InvalidArgumentError: "invalid",
  NotEnoughSpaceError: "quota"
}

const BY_STATUS: Readonly<Record<number, ProviderReason>> = {
  400: "invalid",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  409: "transition",
  429: "rate-limited",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable"
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
  const reason = BY_NAME[name] ?? (status === undefined ? undefined : BY_STATUS[status]) ?? "unknown"
  return { reason, status, text }
}
