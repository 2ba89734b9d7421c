/**
 * What the start tests check of the `/alive` attempts a stand-in saw: READY at the first `/alive`,
 * no poll, for a driver that hands over the server's `listening` line (src/hosted/listeningLine.ts).
 */
import { assert } from "@effect/vitest"
import { Duration } from "effect"
import { ALIVE_ATTEMPT_TIMEOUT } from "../../src/client/policies.ts"

/** A request a stand-in's proxy or tunnel saw: its path and when it came (ms). */
export interface SeenRequest {
  readonly path: string
  readonly at: number
}

/**
 * The wait began at the `listening` line: the attempts at `times` (ms, in order) came one at a
 * time, each after the one before went unanswered for its whole budget (`ALIVE_ATTEMPT_TIMEOUT`,
 * which a loaded machine's proxy can outlast), never a poll's quick step (5-50 ms) after a refusal,
 * which is what an attempt made before the server listened gets.
 */
export const assertReadyAtFirstAlive = (times: ReadonlyArray<number>) => {
  assert.isAtLeast(times.length, 1, "no /alive")
  const budget = Duration.toMillis(ALIVE_ATTEMPT_TIMEOUT)
  const steps = times.slice(1).map((at, i) => at - times[i]!)
  // Timers and the proxy's clock readings may differ by a few ms.
  assert.isTrue(steps.every((ms) => ms >= budget - 50), `/alive asked again after ${steps.join(", ")} ms`)
}
