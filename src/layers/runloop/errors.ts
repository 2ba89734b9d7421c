/**
 * Runloop's failures as the runtime reports them. The SDK throws `APIError`s carrying the HTTP
 * status and Runloop's own message (`401 Invalid API key`, `403 ... devbox limit ...`); they become
 * a `RuntimeStartError` keeping that text and saying what it means for the caller. A 429 is
 * retried first on `rateLimitRetry`, the only retry there is (the client's own is off: client.ts).
 */
import { Effect, Schedule } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"

/** Backs off from 1 s, doubling, jittered, up to 5 retries (about half a minute), then the 429's text. */
export const RUNLOOP_RATE_LIMIT_RETRY: Schedule.Schedule<unknown> = Schedule.exponential("1 second", 2).pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 5 })
)

/** The HTTP status of an SDK error (read structurally: the SDK's classes stay out of our types). */
export const statusOf = (cause: unknown): number | undefined => {
  const status = typeof cause === "object" && cause !== null ? (cause as { status?: unknown }).status : undefined
  return typeof status === "number" ? status : undefined
}

/** What a status means for the caller, after Runloop's own message. */
const advice = (status: number | undefined): string => {
  switch (status) {
    case 401:
      return " (Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)"
    case 402:
    case 403:
      return " (the account's quota or plan refuses it: shut down devboxes or raise the limits)"
    case 429:
      return " (Runloop's rate limit: still refused after retrying with backoff)"
    default:
      return ""
  }
}

/** A failed SDK call as a `RuntimeStartError`: `Runloop: cannot <what>: <status and Runloop's message> (<advice>)`. */
export const runloopStartError = (what: string) => (cause: unknown): RuntimeStartError => {
  const status = statusOf(cause)
  const text = cause instanceof Error ? cause.message : String(cause)
  return new RuntimeStartError({ message: `Runloop: cannot ${what}: ${text}${advice(status)}` })
}

/** An SDK call as an Effect: a 429 retried on `retry`, any failure named with `what`. */
export const runloopCall = <A>(
  what: string,
  call: () => Promise<A>,
  retry: Schedule.Schedule<unknown> = RUNLOOP_RATE_LIMIT_RETRY
): Effect.Effect<A, RuntimeStartError> =>
  Effect.tryPromise({ try: call, catch: (cause) => cause }).pipe(
    Effect.retry({ schedule: retry, while: (cause) => statusOf(cause) === 429 }),
    Effect.mapError(runloopStartError(what))
  )
