/**
 * Waiting out a service that said "not now": the one retry rule of the hosted runtime's
 * `ProviderCall` (src/hosted/providerCall.ts) and the Kubernetes engine's calls
 * (src/engines/kubernetes/apiCall.ts), and the one reading of the `Retry-After` they are given
 * (src/hosted/classifyHttp.ts, src/engines/kubernetes/apiCall.ts, src/providers/remote/api.ts),
 * kept here, below all of them, so they cannot drift apart.
 */
import { Duration, Effect, type Schedule } from "effect"

/**
 * The longest `Retry-After` waited out. A service that asks for more is not coming back within the
 * patience of a start or a call (a broken proxy's `Retry-After: 86400` would hold a start for a
 * day): its refusal is the answer then, at once, with its own text.
 */
export const LONGEST_RETRY_AFTER = Duration.minutes(2)

/**
 * A `Retry-After` header's wait (RFC 9110 §10.2.3): delta-seconds (fractions read too), or an
 * HTTP-date, its distance from `now` (a date past is no wait). Undefined when there is none or it
 * is neither.
 */
export const retryAfterHeader = (
  value: string | null | undefined,
  now: number = Date.now()
): Duration.Duration | undefined => {
  const text = value?.trim() ?? ""
  if (/^\d+(\.\d+)?$/.test(text)) return Duration.seconds(Number(text))
  // A date names its day or month in letters; a bare or signed number that is not seconds is nothing.
  if (!/[A-Za-z]/.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Duration.millis(Math.max(0, at - now))
}

/**
 * `effect` tried again under `schedule` while `worthWaiting(error)`. A `Retry-After` the error
 * carries is a floor under the schedule's own delay, not a replacement for it; one longer than
 * LONGEST_RETRY_AFTER ends the waiting with that error.
 */
export const waitOut = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown>,
  worthWaiting: (error: E) => boolean,
  retryAfter: (error: E) => Duration.Duration | undefined
): Effect.Effect<A, E, R> => {
  const waits = (error: E) => {
    const floor = retryAfter(error)
    return worthWaiting(error) && (floor === undefined || Duration.isLessThanOrEqualTo(floor, LONGEST_RETRY_AFTER))
  }
  return effect.pipe(
    Effect.tapError((error) => {
      const floor = retryAfter(error)
      return floor !== undefined && waits(error) ? Effect.sleep(floor) : Effect.void
    }),
    Effect.retry({ schedule, while: waits })
  )
}
