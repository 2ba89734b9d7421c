/**
 * What every runtime reports about its actions, whatever the transport: a span
 * per action named after its type, a duration histogram and a counter per action
 * type. Users see them with any Effect tracer / metrics exporter.
 */
import { Effect, Metric } from "effect"
import type { Action } from "../../schema/Action.ts"
import type { Observation } from "../../schema/Observation.ts"
import { actionWireType } from "../../schema/wire.ts"

/** The metrics every runtime feeds, attributed by `runtime.kind` and `action.type`. */
export const ActionMetrics = {
  count: Metric.counter("effect_sandbox_actions_total", {
    description: "Actions run, by runtime kind and action type"
  }),
  duration: Metric.timer("effect_sandbox_action_duration", {
    description: "Time from sending an action to its observation"
  })
} as const

/** Wrap one action's execution in its span and metrics. */
export const instrumentAction = <E, R>(
  runtimeKind: string,
  action: Action,
  run: Effect.Effect<Observation, E, R>
): Effect.Effect<Observation, E, R> => {
  const attributes = { "runtime.kind": runtimeKind, "action.type": actionWireType(action) }
  return run.pipe(
    Effect.tap((observation) =>
      observation._tag === "CmdOutputObservation"
        ? Effect.annotateCurrentSpan("exit_code", observation.exitCode)
        : Effect.void
    ),
    Effect.trackDuration(Metric.withAttributes(ActionMetrics.duration, attributes)),
    Effect.tap(() => Metric.update(Metric.withAttributes(ActionMetrics.count, attributes), 1)),
    Effect.withSpan(action._tag, { attributes })
  )
}
