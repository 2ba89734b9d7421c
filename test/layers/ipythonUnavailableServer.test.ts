/**
 * An IPython kernel that cannot start inside an action server: LocalRuntime's capabilities say
 * `ipython: false` with the server's reason (GET /v1/capabilities), as CliRuntime's do
 * (ipythonUnavailable.test.ts); they used to claim what the options asked for. The endpoint is
 * behind the session key like every other but /alive and /server_info.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

const reason = "Cannot start the IPython kernel: the kernel did not start (/nonexistent/python3 -m ipykernel_launcher):"
  + " spawn /nonexistent/python3 ENOENT. Install ipykernel (Debian: python3-ipykernel)."

describe("LocalRuntime: an IPython kernel that cannot start in the server", () => {
  it.live(
    "capabilities.ipython is false with the server's reason; the cell fails saying the same",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const runtime = Context.get(
          yield* Layer.build(
            LocalRuntime.layer({ ipython: { python: "/nonexistent/python3", agentSkills: false } })
          ),
          Runtime
        )
        assert.strictEqual(runtime.info.capabilities.ipython, false)
        assert.deepStrictEqual(runtime.info.capabilities.unavailable, { ipython: reason })
        // Not sent: the server's 500 used to read as a lost server (RuntimeDisconnectedError).
        const error = yield* Effect.flip(runtime.runIPython("print(1)"))
        assert.strictEqual(`${error._tag}: ${error.message}`, `RuntimeStartError: ${reason}`)
        assert.strictEqual(yield* runtime.currentStatus, "READY")
        const unauthenticated = yield* Effect.promise(() =>
          fetch(`${runtime.info.urls["actionServer"]}/v1/capabilities`).then((r) => r.status)
        )
        assert.strictEqual(unauthenticated, 403)
      })),
    60_000
  )
})
