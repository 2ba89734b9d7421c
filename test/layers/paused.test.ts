/**
 * Pause as a state a user can act on: PAUSED while paused; calls made meanwhile fail at once
 * with RuntimePausedError (nothing sent) or, with `whilePaused: "wait"`, run after the resume;
 * the status stream ends after STOPPED. TestRuntime goes through the same wrapper and status
 * cell as every runtime; DockerRuntime's pause is tested in test/docker/lifecycle.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import {
  CmdOutputMetadata,
  CmdOutputObservation,
  Runtime,
  TestRuntime,
  type TestRuntimeOptions
} from "../../src/index.ts"

const PAUSED_MESSAGE = `RuntimePausedError: The test runtime is paused: call resume first, or build its layer with`
  + ` whilePaused: "wait" to have calls wait for the resume.`

const echoed = new CmdOutputObservation({
  content: "hi",
  command: "echo hi",
  metadata: new CmdOutputMetadata({ exitCode: 0 })
})

/** A pausable TestRuntime built in its own scope, so a test can release it. */
const build = (options: TestRuntimeOptions = {}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      TestRuntime.layer({ capabilities: { pause: true }, respond: () => echoed, ...options }),
      scope
    )
    return {
      rt: Context.get(context, Runtime),
      control: Context.get(context, TestRuntime),
      release: Scope.close(scope, Exit.void)
    }
  })

const described = (error: { readonly _tag: string; readonly message: string }) => `${error._tag}: ${error.message}`

describe("a paused runtime", () => {
  it.live("is PAUSED; every call fails at once with RuntimePausedError and sends nothing; resume is READY", () =>
    Effect.gen(function*() {
      const { control, release, rt } = yield* build()
      yield* rt.pause
      assert.strictEqual(yield* rt.currentStatus, "PAUSED")
      assert.strictEqual(described(yield* Effect.flip(rt.runCommand("echo hi"))), PAUSED_MESSAGE)
      assert.strictEqual(described(yield* Effect.flip(rt.read("notes.txt"))), PAUSED_MESSAGE)
      assert.strictEqual(described(yield* Effect.flip(rt.listFiles())), PAUSED_MESSAGE)
      assert.strictEqual(described(yield* Effect.flip(rt.listTools)), PAUSED_MESSAGE)
      assert.strictEqual(described(yield* Effect.flip(rt.addEnvVars({ A: "1" }))), PAUSED_MESSAGE)
      assert.strictEqual(described(yield* Effect.flip(rt.copyTo("/tmp", "/workspace"))), PAUSED_MESSAGE)
      assert.deepStrictEqual(yield* control.actions, [])
      assert.deepStrictEqual(yield* control.env, {})
      assert.deepStrictEqual(yield* control.copies, [])
      yield* rt.resume
      assert.strictEqual(yield* rt.currentStatus, "READY")
      assert.strictEqual((yield* rt.runCommand("echo hi")).content, "hi")
      yield* release
    }))

  it.live("with whilePaused: \"wait\", a call made while paused runs once resumed", () =>
    Effect.gen(function*() {
      const { control, release, rt } = yield* build({ whilePaused: "wait" })
      yield* rt.pause
      const waiting = yield* Effect.forkChild(rt.runCommand("echo hi"))
      yield* Effect.sleep("50 millis")
      assert.isUndefined(waiting.pollUnsafe())
      assert.deepStrictEqual(yield* control.actions, [])
      yield* rt.resume
      assert.strictEqual((yield* Fiber.join(waiting)).content, "hi")
      assert.strictEqual((yield* control.actions).length, 1)
      yield* release
    }))

  it.live("a call waiting for the resume fails with RuntimeDisconnectedError when the runtime is released", () =>
    Effect.gen(function*() {
      const { release, rt } = yield* build({ whilePaused: "wait" })
      yield* rt.pause
      const waiting = yield* Effect.forkChild(Effect.flip(rt.runCommand("echo hi")))
      yield* Effect.sleep("20 millis")
      yield* release
      assert.strictEqual(
        described(yield* Fiber.join(waiting)),
        "RuntimeDisconnectedError: The test runtime was released (its layer's scope closed): build a new runtime to run actions."
      )
    }))

  it.live("the status stream shows PAUSED and READY again, and ends after STOPPED", () =>
    Effect.gen(function*() {
      const { control, release, rt } = yield* build()
      const statuses = yield* Effect.forkChild(Stream.runCollect(rt.status))
      yield* rt.pause
      yield* rt.resume
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(statuses), [
        "STARTING_RUNTIME",
        "READY",
        "PAUSED",
        "READY",
        "STOPPED"
      ])
      // A late subscriber gets the whole history and the end too.
      assert.strictEqual((yield* Stream.runCollect(rt.status)).length, 5)
      // STOPPED is final: a later status is ignored.
      yield* control.setStatus("READY")
      assert.strictEqual(yield* rt.currentStatus, "STOPPED")
    }))
})
