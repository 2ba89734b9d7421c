/**
 * How E2BRuntime retries calls E2B refused with 429 (creation rate, concurrent sandboxes, API
 * requests per window): a module of its own, free of the SDK's types, so `effect-sandbox/e2b`
 * exports it without its users needing `e2b`'s declarations.
 */
import { Schedule } from "effect"

/** Exponential from 1 s, jittered, at most 5 retries (about half a minute in all), then the 429's text. */
export const E2B_RATE_LIMIT_RETRY: Schedule.Schedule<unknown> = Schedule.exponential("1 second").pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 5 })
)
