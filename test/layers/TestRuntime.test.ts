import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import {
  CmdOutputMetadata,
  CmdOutputObservation,
  CmdRunAction,
  ErrorObservation,
  FileReadObservation,
  McpTool,
  Runtime,
  TestRuntime
} from "../../src/index.ts"

describe("TestRuntime", () => {
  it.effect("lists the tools it was given, and none by default", () =>
    Effect.gen(function*() {
      const tool = new McpTool({ server: "s", name: "t", inputSchema: { type: "object" } })
      assert.deepStrictEqual(yield* Effect.provide(Runtime.use((rt) => rt.listTools), TestRuntime.layer()), [])
      const listed = yield* Effect.provide(Runtime.use((rt) => rt.listTools), TestRuntime.layer({ tools: [tool] }))
      assert.deepStrictEqual(listed, [tool])
      assert.strictEqual(listed[0]!.description, "")
    }))

  it.effect("answers queued observations in order and records the actions", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(
        new CmdOutputObservation({
          content: "built",
          command: "make",
          metadata: new CmdOutputMetadata({ exitCode: 0 })
        })
      )
      const first = yield* rt.runCommand("make")
      assert.strictEqual(first.content, "built")
      const second = yield* rt.runCommand("make again")
      assert.instanceOf(second, ErrorObservation)
      assert.strictEqual(second.content, "TestRuntime has no scripted observation for this \"run\" action.")
      const actions = yield* control.actions
      assert.deepStrictEqual(actions.map((a) => (a as CmdRunAction).command), ["make", "make again"])
      // The shared wrapper applied the default hard timeout.
      assert.strictEqual((actions[0] as CmdRunAction).timeout, 120)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("answers with a function, and masks secrets like every runtime", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      yield* rt.addEnvVars({ TOKEN: Redacted.make("hunter2"), PLAIN: "p" })
      const read = yield* rt.read("/workspace/secret.txt")
      assert.instanceOf(read, FileReadObservation)
      assert.strictEqual(read.content, "token=<redacted>")
      assert.deepStrictEqual(yield* control.env, { TOKEN: "hunter2", PLAIN: "p" })
      assert.strictEqual(yield* rt.currentStatus, "READY")
      yield* control.setStatus("ERROR")
      assert.strictEqual(yield* rt.currentStatus, "ERROR")
    }).pipe(Effect.provide(TestRuntime.layer({
      respond: (action) =>
        new FileReadObservation({ content: "token=hunter2", path: (action as { path: string }).path })
    }))))
})
