/**
 * What a failed runtime-API call means (services/Driver.ts `Classified`): the API's status (401 a
 * missing or wrong key, 404 no such session or runtime, 409 a runtime in the wrong state, 429 too
 * many runtimes or builds at once), and no answer at all (a lost connection, an attempt past
 * `apiTimeout`) as unavailable: waited out under `providerRetry`, as OpenHands re-sends them.
 */
import { Duration } from "effect"
import type { ProviderReason } from "../../schema/errors.ts"
import type { Classified } from "../../services/Driver.ts"
import { ApiFailure } from "./api.ts"

const BY_STATUS: Readonly<Record<number, ProviderReason>> = {
  400: "invalid",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  409: "conflict",
  413: "invalid",
  429: "rate-limited",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable"
}

export const classifyRemote = (cause: unknown): Classified => {
  if (!(cause instanceof ApiFailure)) {
    return { reason: "unknown", text: cause instanceof Error ? cause.message : String(cause) }
  }
  const { retryAfter, silent, status } = cause.outcome
  return {
    reason: silent === true ? "unavailable" : status === undefined ? "unknown" : BY_STATUS[status] ?? "unknown",
    status,
    text: cause.message,
    retryAfter: retryAfter === undefined ? undefined : Duration.seconds(retryAfter)
  }
}
