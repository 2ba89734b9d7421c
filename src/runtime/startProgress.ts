/**
 * The runtime builder's end of start progress (services/StartProgress.ts): while a runtime starts,
 * the steps engines and drivers report are stamped with the status their phase belongs to and the
 * time since the start began (the Clock's, so a test's TestClock decides it), then handed to the
 * listener the layer was given.
 */
import { Clock, Duration, Effect } from "effect"
import { StartProgress, type StartStep, StartSteps, statusOfPhase } from "../services/StartProgress.ts"

/**
 * The progress of a start beginning now: `during` runs the start with its steps reported to the
 * layer's listener, `report` reports the builder's own (waiting for the server, ready).
 */
export const startProgress = Effect.gen(function*() {
  const listener = yield* StartProgress
  const began = yield* Clock.currentTimeMillis
  const report = (step: StartStep) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => listener.report({ ...step, status: statusOfPhase(step.phase), elapsed: Duration.millis(now - began) })
    )
  return {
    report,
    during: <A, E, R>(start: Effect.Effect<A, E, R>) => Effect.provideService(start, StartSteps, { report })
  }
})
