/**
 * The Runtime's typed shortcuts: what they return is what their type says (another observation
 * from a server becomes an ErrorObservation saying so), plain objects are accepted where an action
 * is, and a bad field is a typed InvalidOptionsError naming it, with nothing sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Match } from "effect"
import {
  CmdOutputMetadata,
  CmdOutputObservation,
  CmdRunAction,
  ErrorObservation,
  FileEditAction,
  FileEditObservation,
  FileReadObservation,
  InvalidOptionsError,
  Runtime,
  TestRuntime
} from "../../src/index.ts"

const exited = (exitCode: number) =>
  new CmdOutputObservation({ content: "out", command: "make", metadata: new CmdOutputMetadata({ exitCode }) })

/** What an agent does with runCommand's answer: match its tag. */
const told = (observation: CmdOutputObservation | ErrorObservation) =>
  Match.valueTags(observation, {
    CmdOutputObservation: (o) => `exit ${o.exitCode}`,
    ErrorObservation: (o) => `error: ${o.content}`
  })

const refusal = <A>(effect: Effect.Effect<A, { readonly _tag: string; readonly message: string }>) =>
  Effect.map(Effect.flip(effect), (error) => `${error._tag}: ${error.message}`)

describe("Runtime shortcuts", () => {
  it.effect("runCommand: the exit code, or an ErrorObservation, told apart by tag", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(exited(2), new ErrorObservation({ content: "no such cwd" }))
      assert.strictEqual(told(yield* rt.runCommand("make")), "exit 2")
      assert.strictEqual(told(yield* rt.runCommand("make")), "error: no such cwd")
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("an observation of another type than the shortcut's becomes an ErrorObservation saying so", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(new FileReadObservation({ content: "x", path: "a" }))
      const observation = yield* rt.runCommand("make")
      assert.instanceOf(observation, ErrorObservation)
      assert.strictEqual(
        observation.content,
        "The test runtime answered a CmdRunAction with a FileReadObservation, not a CmdOutputObservation."
      )
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("edit, write and runCommand accept plain objects, sent as the action classes", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      yield* control.enqueue(new FileEditObservation({ content: "viewed", path: "/workspace/a.txt" }), exited(0))
      assert.strictEqual((yield* rt.edit({ path: "/workspace/a.txt", command: "view" })).content, "viewed")
      yield* rt.runCommand({ command: "make", blocking: true })
      const [edit, run] = yield* control.actions
      assert.instanceOf(edit, FileEditAction)
      assert.strictEqual(edit.command, "view")
      assert.instanceOf(run, CmdRunAction)
      assert.isTrue(run.blocking)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("a bad field in a plain object is InvalidOptionsError naming it, and nothing is sent", () =>
    Effect.gen(function*() {
      const control = yield* TestRuntime
      const rt = yield* Runtime
      assert.strictEqual(
        yield* refusal(rt.runCommand({ command: "make", timeout: 0 })),
        "InvalidOptionsError: Invalid CmdRunAction: timeout: Expected a value greater than 0"
      )
      assert.strictEqual(
        yield* refusal(rt.write({ path: "a.txt", content: "x", start: 1.5 })),
        "InvalidOptionsError: Invalid FileWriteAction: start: Expected an integer"
      )
      assert.strictEqual(
        // A JavaScript caller (or a cast) can still send an unknown command.
        yield* refusal(rt.edit({ path: "a.txt", command: "delete" as "view" })),
        "InvalidOptionsError: Invalid FileEditAction: command: Expected \"view\" | \"create\" | \"str_replace\" | \"insert\" | \"undo_edit\" | \"\""
      )
      assert.deepStrictEqual(yield* control.actions, [])
    }).pipe(Effect.provide(TestRuntime.layer({ strict: true }))))

  it("FileEditAction.command is a literal union", () => {
    // @ts-expect-error: not one of OHEditor's commands
    assert.throws(() => new FileEditAction({ path: "a.txt", command: "delete" }), InvalidOptionsError)
    assert.strictEqual(new FileEditAction({ path: "a.txt", command: "undo_edit" }).command, "undo_edit")
  })
})
