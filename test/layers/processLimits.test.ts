/** CliRuntime takes the background-process limits from `Limits`, as the action server takes them from its environment. */
import { assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CliRuntime, DEFAULT_LIMITS, Limits, ProcessError, Runtime } from "../../src/index.ts"

it.live("a CliRuntime built with Limits { processes: 1 } refuses a second spawn, naming the limit", () =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    yield* rt.spawn("exec sleep 30")
    const refused = yield* Effect.flip(rt.spawn("exec sleep 30"))
    assert.instanceOf(refused, ProcessError)
    assert.strictEqual(
      refused.message,
      "The session holds its limit of background processes (EFFECT_SANDBOX_MAX_PROCESSES=1): " +
        "close a process's scope (or DELETE it) before starting another."
    )
  }).pipe(
    Effect.scoped,
    Effect.provide(CliRuntime.layer().pipe(Layer.provide(Layer.succeed(Limits, { ...DEFAULT_LIMITS, processes: 1 }))))
  ))
