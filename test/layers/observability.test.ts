import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Metric, Redacted, Tracer } from "effect"
import { ActionMetrics, CliRuntime, Runtime } from "../../src/index.ts"

describe("observability", () => {
  it.live("each action runs in a span named after its type, with attributes and metrics", () =>
    Effect.gen(function*() {
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
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
      const everything = JSON.stringify(spans.map((s) => [...s.attributes.entries()]))
      assert.notInclude(everything, "do-not-leak-42")

      const count = yield* Metric.value(
        Metric.withAttributes(ActionMetrics.count, { "runtime.kind": "cli", "action.type": "run" })
      )
      assert.isAtLeast(Number(count.count), 2)
    }))
})
