/**
 * Daytona's failures as the runtime reports them. The SDK throws `DaytonaError`s carrying the
 * API's status and message (the control plane's own text: "Invalid API key", "Total CPU limit
 * exceeded. Maximum allowed: 10", ...); they become a `RuntimeStartError` (or `RuntimeError` for
 * pause and resume) that keeps that text and says what it means for the caller. A 429 is retried
 * with `rateLimitRetry` first: Daytona limits sandbox creation per minute, and a burst of warm-pool
 * starts hits it without anything being wrong.
 */
import { Effect, Schedule } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"

/** What the runtime reads from an SDK error (structurally: the SDK's classes stay out of our types). */
interface SdkError {
  readonly message?: string
  readonly statusCode?: number
}

const statusOf = (cause: unknown): number | undefined =>
  typeof cause === "object" && cause !== null ? (cause as SdkError).statusCode : undefined

/** Backs off from 1 s, doubling, jittered, up to 6 retries (about a minute): Daytona's limits are per minute. */
export const rateLimitRetry: Schedule.Schedule<unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 6 })
)

/** What a status means for the caller, appended to Daytona's own message. */
const advice = (status: number | undefined): string => {
  switch (status) {
    case 401:
      return " (Daytona refused the API key: check DAYTONA_API_KEY or the `apiKey` option)"
    case 403:
      return " (the organisation's quota or permissions refuse it: stop or delete sandboxes, or raise the limits)"
    case 429:
      return " (Daytona's rate limit: still refused after retrying with backoff)"
    default:
      return ""
  }
}

/** A failed SDK call as a `RuntimeStartError`: `Daytona: cannot <what>: <Daytona's message> (<advice>)`. */
export const daytonaStartError = (what: string) => (cause: unknown): RuntimeStartError => {
  const status = statusOf(cause)
  const text = cause instanceof Error ? cause.message : String(cause)
  return new RuntimeStartError({
    message: `Daytona: cannot ${what}: ${status === undefined ? "" : `${status} `}${text}${advice(status)}`
  })
}

/** An SDK call as an Effect: a 429 is retried on `rateLimitRetry`, any failure named with `what`. */
export const daytonaCall = <A>(what: string, call: () => Promise<A>): Effect.Effect<A, RuntimeStartError> =>
  Effect.tryPromise({ try: call, catch: (cause) => cause }).pipe(
    Effect.retry({ schedule: rateLimitRetry, while: (cause) => statusOf(cause) === 429 }),
    Effect.mapError(daytonaStartError(what))
  )
