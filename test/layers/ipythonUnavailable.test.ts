/**
 * An IPython kernel that cannot start: the capability is false with the reason, and the IPython
 * action fails with a typed error saying the same (it used to claim `ipython: true`, and the
 * reason was empty when the interpreter printed nothing).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { CliRuntime } from "../../src/layers/CliRuntime.ts"
import { Runtime } from "../../src/services/Runtime.ts"

const cases = [
  ["a missing interpreter", "/nonexistent/python3", "spawn /nonexistent/python3 ENOENT"],
  ["an interpreter that exits at once", "/bin/false", "exited with code 1"]
] as const

describe("an IPython kernel that cannot start", () => {
  for (const [name, python, ending] of cases) {
    it.live(name, () =>
      Effect.scoped(Effect.gen(function*() {
        const runtime = Context.get(
          yield* Layer.build(CliRuntime.layer({ ipython: { python, agentSkills: false } })),
          Runtime
        )
        const reason = `Cannot start the IPython kernel: the kernel did not start (${python} -m ipykernel_launcher):`
          + ` ${ending}. Install ipykernel (Debian: python3-ipykernel).`
        assert.strictEqual(runtime.info.capabilities.ipython, false)
        assert.deepStrictEqual(runtime.info.capabilities.unavailable, { ipython: reason })
        const error = yield* Effect.flip(runtime.runIPython("print(1)"))
        assert.strictEqual(`${error._tag}: ${error.message}`, `RuntimeStartError: ${reason}`)
      })), 60_000)
  }
})
