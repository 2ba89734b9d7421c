/**
 * Waiting out a service that said "not now": the one retry rule of the hosted runtime's
 * `ProviderCall` (src/hosted/providerCall.ts) and the Kubernetes engine's calls
 * (src/engines/kubernetes/apiCall.ts), kept here, below both, so they cannot drift apart.
 */
import { type Duration, Effect, type Schedule } from "effect"

/**
 * `effect` tried again under `schedule` while `worthWaiting(error)`. A `Retry-After` the error
 * carries is a floor under the schedule's own delay, not a replacement for it.
 */
export const waitOut = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown>,
  worthWaiting: (error: E) => boolean,
  retryAfter: (error: E) => Duration.Duration | undefined
): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.tapError((error) => {
      const floor = retryAfter(error)
      return floor !== undefined && worthWaiting(error) ? Effect.sleep(floor) : Effect.void
    }),
    Effect.retry({ schedule, while: worthWaiting })
  )
