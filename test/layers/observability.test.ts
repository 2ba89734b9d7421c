import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Metric, Redacted } from "effect"
import { ActionMetrics, CliRuntime, Runtime } from "../../src/index.ts"
import { recordingTracer } from "../recordingTracer.ts"

describe("observability", () => {
  it.live("each action runs in a span named after its type, with attributes and metrics", () =>
    Effect.gen(function*() {
      const { everything, spans, tracer } = recordingTracer()
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        yield* rt.addEnvVars({ SECRET_VALUE: Redacted.make("do-not-leak-42") })
        yield* rt.runCommand("echo $SECRET_VALUE; exit 0")
        yield* rt.runCommand("(exit 5)")
        yield* rt.read("missing.txt")
      }).pipe(
        Effect.provide(Layer.fresh(CliRuntime.layer({ noChangeTimeoutSeconds: 1 }))),
        Effect.withTracer(tracer)
      )
      const commands = spans.filter((s) => s.name === "CmdRunAction")
      assert.strictEqual(commands.length, 2)
      assert.strictEqual(commands[0]!.attributes.get("runtime.kind"), "cli")
      assert.strictEqual(commands[0]!.attributes.get("action.type"), "run")
      assert.strictEqual(commands[1]!.attributes.get("exit_code"), 5)
      assert.isTrue(spans.some((s) => s.name === "FileReadAction"))
      const env = spans.find((s) => s.name === "Runtime.addEnvVars")!
      assert.deepStrictEqual(env.attributes.get("names"), ["SECRET_VALUE"])
      assert.notInclude(everything(), "do-not-leak-42")

      const count = yield* Metric.value(
        Metric.withAttributes(ActionMetrics.count, { "runtime.kind": "cli", "action.type": "run" })
      )
      assert.isAtLeast(Number(count.count), 2)
    }))

  it.live("the action counter reads the number of actions sent, per runtime kind and action type, and in total", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        yield* rt.runCommand("true")
        yield* rt.runCommand("(exit 5)")
        // Sent, then interrupted: still an action run.
        yield* rt.runCommand("sleep 5").pipe(Effect.timeout("300 millis"), Effect.ignore)
        yield* rt.read("missing.txt")
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({ noChangeTimeoutSeconds: 1 }))))

      const runs = yield* Metric.value(
        Metric.withAttributes(ActionMetrics.count, { "runtime.kind": "cli", "action.type": "run" })
      )
      assert.deepStrictEqual(runs, { count: 3, incremental: true })
      assert.strictEqual(yield* ActionMetrics.countOf({ runtimeKind: "cli", actionType: "run" }), 3)
      assert.strictEqual(yield* ActionMetrics.countOf({ actionType: "read" }), 1)
      assert.strictEqual(yield* ActionMetrics.countOf({ runtimeKind: "local" }), 0)
      assert.strictEqual(yield* ActionMetrics.countOf(), 4)
      const durations = yield* Metric.value(
        Metric.withAttributes(ActionMetrics.duration, { "runtime.kind": "cli", "action.type": "run" })
      )
      assert.strictEqual(durations.count, 3)
    }).pipe(
      // A registry of its own: the counts are this test's alone.
      Effect.provideService(Metric.MetricRegistry, new Map())
    ))
})
