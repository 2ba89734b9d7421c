/** Waiting for a starting (or resumed) action server to answer `/alive`. `ActionClient.ts` re-exports it. */
import { Duration, Effect, type Schedule } from "effect"
import { HttpClient } from "effect/http"
import { RuntimeStartError } from "../schema/errors.ts"
import { ALIVE_ATTEMPT_TIMEOUT, aliveSchedule, DEFAULT_ALIVE_TIMEOUT } from "./policies.ts"

/** The wait's end, distinct from an attempt's failure: the time budget ran out. */
class BudgetSpent {
  readonly _tag = "BudgetSpent"
}

/**
 * Wait until the server answers `/alive` with a 2xx, or fail with `RuntimeStartError`: when the
 * time budget runs out, or earlier when `schedule` (default `aliveSchedule`, which never ends) ends.
 */
export const waitUntilAlive = (
  baseUrl: string,
  timeout: Duration.Input = DEFAULT_ALIVE_TIMEOUT,
  schedule: Schedule.Schedule<unknown> = aliveSchedule
): Effect.Effect<void, RuntimeStartError, HttpClient.HttpClient> =>
  HttpClient.get(`${baseUrl}/alive`).pipe(
    // docker-proxy accepts before the server inside listens, then resets or stalls the
    // connection: any failure, or no answer within the attempt's budget, means "not yet".
    Effect.flatMap((response) => response.status < 300 ? Effect.void : Effect.fail(response)),
    Effect.timeout(ALIVE_ATTEMPT_TIMEOUT),
    Effect.retry(schedule),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new BudgetSpent()) }),
    Effect.mapError((error) =>
      new RuntimeStartError({
        message: `The action server at ${baseUrl} did not answer /alive ${
          error instanceof BudgetSpent
            ? `within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
            : "before its wait schedule (schedules.waitUntilAlive) ended"
        }. Check its log for a start-up error.`
      })
    ),
    Effect.withSpan("ActionClient.waitUntilAlive", { attributes: { baseUrl } })
  )
