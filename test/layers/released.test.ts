/**
 * A runtime kept past its layer's scope refuses every call with one typed error saying it was
 * released (CliRuntime used to die with `ENOENT .../command.sh` from its removed state dir).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { CliRuntime } from "../../src/layers/CliRuntime.ts"
import { LocalRuntime } from "../../src/layers/LocalRuntime.ts"
import { CmdRunAction } from "../../src/schema/Action.ts"
import { Runtime } from "../../src/services/Runtime.ts"

/** The runtime of `layer`, after the scope it was built in has closed. */
const released = <E>(layer: Layer.Layer<Runtime, E>) =>
  Effect.scoped(Effect.map(Layer.build(layer), (context) => Context.get(context, Runtime)))

const refusal = <A, E extends { readonly _tag: string; readonly message: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error) => `${error._tag}: ${error.message}`)

const layers = [
  ["cli", () => CliRuntime.layer()],
  ["local", () => LocalRuntime.layer()]
] as const

describe("a runtime used after its scope closed", () => {
  for (const [kind, layer] of layers) {
    it.live(`${kind}: RuntimeDisconnectedError saying it was released, for every call`, () =>
      Effect.gen(function*() {
        const runtime = yield* released(layer())
        const expected = `RuntimeDisconnectedError: The ${kind} runtime was released (its layer's scope closed):`
          + " build a new runtime to run actions."
        assert.strictEqual(yield* refusal(runtime.runCommand("echo hi")), expected)
        assert.strictEqual(
          yield* refusal(Stream.runDrain(runtime.runStream(new CmdRunAction({ command: "echo hi" })))),
          expected
        )
        assert.strictEqual(yield* refusal(runtime.read("notes.txt")), expected)
        assert.strictEqual(yield* refusal(runtime.listFiles()), expected)
        assert.strictEqual(yield* refusal(runtime.addEnvVars({ A: "1" })), expected)
        assert.strictEqual(yield* refusal(runtime.copyFrom("/", "/tmp/never.zip")), expected)
        assert.strictEqual(yield* runtime.currentStatus, "STOPPED")
      }), 60_000)
  }
})
