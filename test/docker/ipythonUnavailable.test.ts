/**
 * DockerRuntime's capabilities come from the server in the container (GET /v1/capabilities), not
 * from the options: a kernel that cannot start there (an image that passed the preflight, its
 * Python broken at run time by the `env` given, PYTHONHOME) makes `ipython` false with the
 * server's reason, and a cell fails with a RuntimeStartError saying the same, as on Cli and Local
 * (test/layers/ipythonUnavailable*.test.ts). The runtime stays READY; its container goes with it.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { assertNoContainer, buildRuntime, dockerLayer, removeLeftovers, sessionId } from "./helpers.ts"
import { describeDocker, toolsImage } from "./infra.ts"

describeDocker("DockerRuntime: an IPython kernel that cannot start in the container", () => {
  afterAll(() => removeLeftovers("ipython-unavailable"))

  it.live(
    "capabilities.ipython is false with the server's reason; a cell fails saying the same",
    () =>
      Effect.gen(function*() {
        const session = sessionId("ipython-unavailable")
        const { release, rt } = yield* buildRuntime(
          dockerLayer(toolsImage(), {
            sessionId: session,
            ipython: { agentSkills: false },
            env: { PYTHONHOME: "/nonexistent" }
          })
        )
        assert.strictEqual(rt.info.capabilities.ipython, false)
        const reason = rt.info.capabilities.unavailable?.ipython ?? ""
        assert.isTrue(
          reason.startsWith(
            "Cannot start the IPython kernel: the kernel did not start (/usr/bin/python3 -m ipykernel_launcher): "
          ),
          reason
        )
        // Python's own words, from the container's interpreter.
        assert.include(reason, "Fatal Python error: init_fs_encoding")
        assert.include(reason, "PYTHONHOME = '/nonexistent'")
        const error = yield* Effect.flip(rt.runIPython("print(1)"))
        assert.strictEqual(`${error._tag}: ${error.message}`, `RuntimeStartError: ${reason}`)
        assert.strictEqual(yield* rt.currentStatus, "READY")
        yield* release
        assertNoContainer(session)
      }).pipe(Effect.scoped),
    300_000
  )
})
