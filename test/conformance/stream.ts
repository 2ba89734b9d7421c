/**
 * `Runtime.runStream` on every runtime: a command's output arrives while it
 * runs, adds up to the observation, masks secrets across chunk boundaries, and
 * interrupting the consumer stops the command.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, Stream } from "effect"
import {
  type ActionEvent,
  CmdOutputObservation,
  CmdRunAction,
  IPythonRunCellAction,
  type RuntimeShape
} from "../../src/index.ts"
import { awaitProcessCount, uniqueSeconds, withRuntime } from "./helpers.ts"
import type { ConformanceTarget } from "./target.ts"

/** Each event with the milliseconds since the stream started. */
const timedEvents = (rt: RuntimeShape, command: string) =>
  Effect.gen(function*() {
    const start = Date.now()
    return yield* rt.runStream(new CmdRunAction({ command })).pipe(
      Stream.map((event) => ({ event, at: Date.now() - start })),
      Stream.runCollect
    )
  })

const outputOf = (events: ReadonlyArray<{ readonly event: ActionEvent }>) =>
  events.flatMap(({ event }) => event._tag === "Output" ? [event.text] : [])

const lastObservation = (events: ReadonlyArray<{ readonly event: ActionEvent }>) => {
  const last = events.at(-1)!.event
  assert.strictEqual(last._tag, "Observation")
  const observation = (last as ActionEvent & { _tag: "Observation" }).observation
  assert.instanceOf(observation, CmdOutputObservation)
  return observation as CmdOutputObservation
}

/** The terminal's text as the agent's view has it: CRLF as LF, no trailing newline. */
const asContent = (output: ReadonlyArray<string>) => output.join("").replace(/\r\n/g, "\n").replace(/\n+$/, "")

export const streamConformance = (target: ConformanceTarget) =>
  describe("runStream", () => {
    it.live("yields output while the command runs, then the observation it adds up to", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const events = yield* timedEvents(rt, "for i in 1 2 3; do echo $i; sleep 0.3; done")
          const output = outputOf(events)
          assert.isAtLeast(output.length, 2, JSON.stringify(output))
          assert.deepStrictEqual(events.slice(0, -1).map(({ event }) => event._tag), output.map(() => "Output"))
          const observation = lastObservation(events)
          // The first chunk came well before the end: streamed, not buffered.
          assert.isAbove(events.at(-1)!.at - events[0]!.at, 400)
          assert.strictEqual(observation.content, "1\n2\n3")
          assert.strictEqual(asContent(output), observation.content)
          assert.strictEqual(observation.exitCode, 0)
        })))

    it.live("masks a secret printed across two chunks: no chunk shows a piece of it", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const secret = "stream-Qz8Wv3Jp8Lm4"
          yield* rt.addEnvVars({ STREAM_TOKEN: Redacted.make(secret) })
          // Two writes 0.3 s apart, so the secret spans two output chunks.
          const events = yield* timedEvents(
            rt,
            "printf %s \"x ${STREAM_TOKEN:0:9}\"; sleep 0.3; echo \"${STREAM_TOKEN:9} y\""
          )
          const output = outputOf(events)
          for (const chunk of output) assert.notInclude(chunk, secret.slice(0, 7), JSON.stringify(output))
          assert.strictEqual(asContent(output), "x <redacted> y")
          assert.strictEqual(lastObservation(events).content, "x <redacted> y")
        })))

    it.live.skipIf(!target.capabilities.ipython)("streams an IPython cell's prints as the kernel sends them", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const start = Date.now()
          const code = "import time\nfor i in range(3):\n    print(f'cell{i}', flush=True)\n    time.sleep(0.3)"
          const events = yield* rt.runStream(new IPythonRunCellAction({ code, includeExtra: false })).pipe(
            Stream.map((event) => ({ event, at: Date.now() - start })),
            Stream.runCollect
          )
          const output = outputOf(events)
          assert.isAtLeast(output.length, 2, JSON.stringify(output))
          assert.isAbove(events.at(-1)!.at - events[0]!.at, 400)
          const last = events.at(-1)!.event as ActionEvent & { _tag: "Observation" }
          assert.strictEqual(last.observation.content, "cell0\ncell1\ncell2")
          assert.strictEqual(asContent(output), last.observation.content)
        })))

    // Through a port-forward the server may hear its client go a second or more after the drop: the
    // stream must still be open then (no soft time-out meanwhile), and the command is gone within 5 s.
    it.live("interrupting the consumer stops the command, and the session still answers", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const seconds = uniqueSeconds()
          const fiber = yield* rt.runStream(new CmdRunAction({ command: `echo started; sleep ${seconds}` })).pipe(
            Stream.runCollect,
            Effect.forkChild
          )
          yield* awaitProcessCount(`sleep ${seconds}`, 1)
          yield* Fiber.interrupt(fiber)
          yield* awaitProcessCount(`sleep ${seconds}`, 0)
          const next = yield* rt.runCommand("echo still here")
          assert.strictEqual(next.content, "still here")
        })))
  })
