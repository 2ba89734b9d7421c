/**
 * What every runtime reports about its actions, whatever the transport: a span
 * per action named after its type, a duration histogram and a counter per action
 * type. Users see them with any Effect tracer / metrics exporter.
 */
import { Effect, Metric } from "effect"
import type { Action } from "../schema/Action.ts"
import type { Observation } from "../schema/Observation.ts"
import { actionWireType } from "../schema/wire.ts"

const COUNT_ID = "effect_sandbox_actions_total"

/**
 * How many actions were sent, over every `runtime.kind` and `action.type` series or those the
 * filter names. Why not `Metric.value(ActionMetrics.count)`: that reads only the series without
 * attributes, which no runtime feeds (each action counts under its kind and type), so it says 0.
 */
const countOf = Effect.fn("ActionMetrics.countOf")(function*(
  filter: { readonly runtimeKind?: string; readonly actionType?: string } = {}
) {
  const snapshots = yield* Metric.snapshot
  let total = 0
  for (const metric of snapshots) {
    if (metric.id !== COUNT_ID || metric.type !== "Counter" || metric.attributes === undefined) continue
    if (filter.runtimeKind !== undefined && metric.attributes["runtime.kind"] !== filter.runtimeKind) continue
    if (filter.actionType !== undefined && metric.attributes["action.type"] !== filter.actionType) continue
    total += Number(metric.state.count)
  }
  return total
})

/** The metrics every runtime feeds, attributed by `runtime.kind` and `action.type`. */
export const ActionMetrics = {
  /**
   * Every action sent, whatever its outcome (an observation, a typed error, an interruption).
   * Incremental: it only goes up, so OTLP exports it as a monotonic sum (a Prometheus counter).
   */
  count: Metric.counter(COUNT_ID, {
    description: "Actions run, by runtime kind and action type",
    incremental: true
  }),
  duration: Metric.timer("effect_sandbox_action_duration", {
    description: "Time from sending an action to its observation"
  }),
  countOf
} as const

/** The metrics of one `runtime.kind` and `action.type`: attributing a metric per call cost ~15 µs an action. */
const makeInstruments = (runtimeKind: string, actionType: string) => {
  const attributes = { "runtime.kind": runtimeKind, "action.type": actionType }
  return {
    attributes,
    duration: Metric.withAttributes(ActionMetrics.duration, attributes),
    count: Metric.withAttributes(ActionMetrics.count, attributes)
  }
}
const instruments = new Map<string, ReturnType<typeof makeInstruments>>()
const instrumentsOf = (runtimeKind: string, actionType: string) => {
  const key = `${runtimeKind}\0${actionType}`
  let made = instruments.get(key)
  if (made === undefined) instruments.set(key, made = makeInstruments(runtimeKind, actionType))
  return made
}

/**
 * Wrap one action's execution in its span and metrics. The span captures no stack trace: it would
 * always name this line, and capturing it was the costliest part of an action's telemetry.
 */
export const instrumentAction = <E, R>(
  runtimeKind: string,
  action: Action,
  run: Effect.Effect<Observation, E, R>
): Effect.Effect<Observation, E, R> => {
  const { attributes, count, duration } = instrumentsOf(runtimeKind, actionWireType(action))
  return run.pipe(
    Effect.tap((observation) =>
      observation._tag === "CmdOutputObservation"
        ? Effect.annotateCurrentSpan("exit_code", observation.exitCode)
        : Effect.void
    ),
    Effect.trackDuration(duration),
    Effect.ensuring(Metric.update(count, 1)),
    Effect.withSpan(action._tag, { attributes }, { captureStackTrace: false })
  )
}
