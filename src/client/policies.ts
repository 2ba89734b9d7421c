/**
 * The HTTP transport's policies, as values (DESIGN principle 3): how long and how
 * often to wait for a server to come alive, what to retry, and how long an action
 * may take over the wire. The two schedules are public: a layer's `schedules`
 * option replaces them for that runtime (e.g. a CI job that would rather fail in
 * 5 s than wait 2 minutes for a server, or a remote one that retries longer).
 */
import { Duration, Schedule } from "effect"
import type { Action } from "../schema/Action.ts"

/**
 * Poll `/alive` quickly at first (a local server answers in ~100 ms), backing off to 50 ms.
 * It never ends by itself: the runtime's time budget ends the wait (120 s; Docker 60 s).
 * Where a driver hands over the server's `listening` line (Local, Docker, E2B, Daytona, Runloop,
 * Modal) the first attempt answers; where a stream fails, stalls or ends unheard (and elsewhere),
 * this poll finds a server that boots in 250-500 ms, and a 250 ms step overshot it by up to that much. A refused attempt costs the booting sandbox
 * next to nothing (no server listens yet), so the step stays short for the whole wait.
 */
export const aliveSchedule: Schedule.Schedule<Duration.Duration> = Schedule.min([
  Schedule.exponential("5 millis", 1.5),
  Schedule.spaced("50 millis")
])

/** One `/alive` attempt's budget: a stalled connection must not stall the wait (a live local server answers in ms). */
export const ALIVE_ATTEMPT_TIMEOUT = Duration.millis(500)

/** How long a server may take to answer `/alive` before the runtime gives up (OpenHands: 120 s). */
export const DEFAULT_ALIVE_TIMEOUT = Duration.seconds(120)

/** Retries for requests that never reached a handler (429, connection refused): jittered backoff, bounded. */
export const retrySchedule: Schedule.Schedule<Duration.Duration> = Schedule.min([
  Schedule.exponential("100 millis", 2),
  Schedule.spaced("4 seconds")
]).pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 4 })
)

/**
 * A runtime's replacements for the transport's schedules (each defaults to the value above).
 * `waitUntilAlive` polls `/alive` while the server starts (and after a resume): a schedule that
 * ends (`Schedule.recurs(3)`, `Schedule.during("5 seconds")`) fails the wait when it ends, with the
 * same `RuntimeStartError`, before the runtime's time budget. `retry` re-sends requests that never
 * reached a handler (429, connection refused); once it ends the runtime is disconnected.
 */
export interface RuntimeSchedules {
  readonly retry?: Schedule.Schedule<unknown>
  readonly waitUntilAlive?: Schedule.Schedule<unknown>
}

/** OpenHands' client allows the action's own timeout plus 5 s for the HTTP round trip. */
export const actionHttpTimeout = (action: Action, defaultSeconds: number): Duration.Duration =>
  Duration.seconds((action.timeout ?? defaultSeconds) + 5)

/** Budgets of the other endpoints (spec §16: list 10 s, download 30 s, upload 300 s). */
export const REQUEST_TIMEOUTS = {
  list: Duration.seconds(10),
  download: Duration.seconds(30),
  upload: Duration.seconds(300),
  env: Duration.seconds(60),
  mcpTools: Duration.seconds(10),
  /** A background process's start, stdin, signal or removal (its output and wait last as long as it runs). */
  process: Duration.seconds(30)
} as const
