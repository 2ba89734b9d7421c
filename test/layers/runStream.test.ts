/**
 * `Runtime.runStream` in the wrapper every runtime shares (seen through
 * TestRuntime, whose backend goes through it): output chunks then the
 * observation, secrets masked across chunk boundaries, scripted chunks. The real transports are in test/conformance/stream.ts and
 * test/client/stream.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Stream } from "effect"
import {
  type Action,
  type ActionEvent,
  CmdOutputMetadata,
  CmdOutputObservation,
  CmdRunAction,
  FileReadAction,
  FileReadObservation,
  Runtime,
  RuntimeDisconnectedError,
  StreamedStep,
  TestRuntime
} from "../../src/index.ts"
import { MASK } from "../../src/schema/secrets.ts"

const SECRET = "tok-0123456789abcdefghij"

const command = (content: string) =>
  new CmdOutputObservation({ content, command: "x", metadata: new CmdOutputMetadata({ exitCode: 0 }) })

const collect = (rt: typeof Runtime.Service, action: Action = new CmdRunAction({ command: "x" })) =>
  Stream.runCollect(rt.runStream(action))

const texts = (events: ReadonlyArray<ActionEvent>) =>
  events.flatMap((event) => event._tag === "Output" ? [event.text] : [])

/** A TestRuntime whose command prints `chunks` one by one, then answers `content`, with SECRET a secret. */
const printing = (chunks: ReadonlyArray<string>, content: string) =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    yield* (yield* TestRuntime).enqueue(new StreamedStep(chunks, command(content)))
    yield* rt.addEnvVars({ TOKEN: Redacted.make(SECRET) })
    return rt
  })

describe("runStream (the runtime wrapper)", () => {
  it.effect("masks a secret split across two chunks: no chunk shows any piece of it", () =>
    Effect.gen(function*() {
      const rt = yield* printing([`a ${SECRET.slice(0, 9)}`, `${SECRET.slice(9)} b`], `a ${SECRET} b`)
      const events = yield* collect(rt)
      const output = texts(events)
      assert.deepStrictEqual(output, ["a ", `${MASK} b`])
      assert.strictEqual((events.at(-1) as ActionEvent & { _tag: "Observation" }).observation.content, `a ${MASK} b`)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("hands on a held-back end when the output ends (it began a secret but did not complete one)", () =>
    Effect.gen(function*() {
      const rt = yield* printing(["x ", SECRET.slice(0, 6)], `x ${SECRET.slice(0, 6)}`)
      const events = yield* collect(rt)
      assert.deepStrictEqual(texts(events), ["x ", SECRET.slice(0, 6)])
      assert.strictEqual(events.at(-1)!._tag, "Observation")
    }).pipe(Effect.provide(TestRuntime.layer())))
})

describe("runStream (TestRuntime)", () => {
  it.effect("emits scripted chunks then the observation; run gets the observation alone", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      const done = command("1\n2")
      yield* control.enqueue(new StreamedStep(["1\n", "2\n"], done), new StreamedStep(["ignored"], done))
      const events = yield* collect(rt)
      assert.deepStrictEqual(events.map((e) => e._tag), ["Output", "Output", "Observation"])
      assert.deepStrictEqual(texts(events), ["1\n", "2\n"])
      assert.strictEqual((events[2] as ActionEvent & { _tag: "Observation" }).observation, done)
      assert.strictEqual(yield* rt.run(new CmdRunAction({ command: "x" })), done)
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("without scripted chunks a command's content is one chunk; other observations come alone", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      const read = new FileReadObservation({ content: "file text", path: "/w/f" })
      yield* control.enqueue(command("all at once"), read)
      assert.deepStrictEqual(texts(yield* collect(rt)), ["all at once"])
      const events = yield* collect(rt, new FileReadAction({ path: "/w/f" }))
      assert.deepStrictEqual(events.map((e) => e._tag), ["Observation"])
    }).pipe(Effect.provide(TestRuntime.layer())))

  it.effect("a scripted runtime failure fails the stream with the typed error", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      const control = yield* TestRuntime
      yield* control.enqueue(new RuntimeDisconnectedError({ message: "gone" }))
      const error = yield* Effect.flip(collect(rt))
      assert.instanceOf(error, RuntimeDisconnectedError)
      assert.strictEqual(error.message, "gone")
    }).pipe(Effect.provide(TestRuntime.layer())))
})
