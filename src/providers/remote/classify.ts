/**
 * What a failed runtime-API call means (services/Driver.ts `Classified`): the API's status (401 a
 * missing or wrong key, 404 no such session or runtime, 409 a runtime in the wrong state, 429 too
 * many runtimes or builds at once), and no answer at all (a lost connection, an attempt past
 * `apiTimeout`) as unavailable: waited out under `providerRetry`, as OpenHands re-sends them.
 */
import type { ProviderReason } from "../../schema/errors.ts"
import { reasonOfStatus } from "../../schema/httpReason.ts"
import type { Classified } from "../../services/Driver.ts"
import { ApiFailure } from "./api.ts"

/**
 * Where the runtime API means otherwise than the common table: its 500 is a refusal to start (no
 * capacity, a bad image), not worth sending again; a 413 is a context too large.
 */
const RUNTIME_API: Readonly<Record<number, ProviderReason>> = { 413: "invalid", 500: "unknown" }

export const classifyRemote = (cause: unknown): Classified => {
  if (!(cause instanceof ApiFailure)) {
    return { reason: "unknown", text: cause instanceof Error ? cause.message : String(cause) }
  }
  const { retryAfter, silent, status } = cause.outcome
  return {
    reason: silent === true ? "unavailable" : reasonOfStatus(status, RUNTIME_API),
    status,
    text: cause.message,
    retryAfter
  }
}
