/**
 * A cell that will not be interrupted (it catches KeyboardInterrupt) is still
 * stopped when its action is interrupted: the kernel is killed after the grace
 * period, and the next cell restarts it and says its state is lost.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KERNEL_RESTARTED } from "../../src/executor/jupyter/IPython.ts"
import { CliRuntime, IPythonRunCellAction, Runtime } from "../../src/index.ts"
import { kernelAvailable } from "../conformance/kernel.ts"
import { eventually } from "../eventually.ts"

describe("interrupting IPython", () => {
  it.live.skipIf(!kernelAvailable())(
    "kills a kernel whose cell ignores the interrupt; the next cell restarts it",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const cell = (code: string) => rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false }))
        const dir = mkdtempSync(join(tmpdir(), "stubborn-cell-"))
        const started = join(dir, "started")
        yield* cell("state = 1")
        const fiber = yield* Effect.forkChild(cell(
          `import time\nopen(${
            JSON.stringify(started)
          }, "w").close()\nwhile True:\n  try:\n    time.sleep(60)\n  except KeyboardInterrupt:\n    pass`
        ))
        yield* eventually("the cell started", () => existsSync(started))
        const begun = Date.now()
        yield* Fiber.interrupt(fiber)
        // The interruption returns once the kernel is gone: after the 5 s grace, not 60 s.
        assert.isBelow(Date.now() - begun, 8_000)
        const next = yield* cell("print('state' in globals())")
        assert.strictEqual(next.content, `${KERNEL_RESTARTED}\nFalse`)
        rmSync(dir, { recursive: true, force: true })
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({ ipython: { agentSkills: false } })))),
    30_000
  )
})

describe("IPython after an error", () => {
  it.live.skipIf(!kernelAvailable())(
    "runs the next cell, sent as soon as the error came back, instead of answering it aborted",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const cell = (code: string) => rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false }))
        yield* cell("kept = 'yes'")
        for (let round = 0; round < 40; round++) {
          assert.include((yield* cell("1/0")).content, "ZeroDivisionError")
          assert.strictEqual((yield* cell("kept")).content, "'yes'", `round ${round}`)
        }
      }).pipe(Effect.provide(Layer.fresh(CliRuntime.layer({ ipython: { agentSkills: false } })))),
    60_000
  )
})
