/**
 * How ModalRuntime retries calls Modal refused for a rate or quota (gRPC RESOURCE_EXHAUSTED:
 * sandbox creations per minute, concurrent sandboxes): a module of its own, free of the SDK's
 * types, so `effect-sandbox/modal` exports it without its users needing `modal`'s declarations.
 * (When Modal attaches a retry policy to the refusal, the SDK itself waits as told first.)
 */
import { Schedule } from "effect"

/** Exponential from 1 s, jittered, at most 5 retries (about half a minute in all), then Modal's text. */
export const MODAL_RATE_LIMIT_RETRY: Schedule.Schedule<unknown> = Schedule.exponential("1 second").pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 5 })
)
