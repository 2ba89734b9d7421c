/** A background process's output log: late readers, slow readers and the cap. */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Stream } from "effect"
import { OutputLog } from "../../src/executor/processes/outputLog.ts"
import type { ProcessOutput } from "../../src/index.ts"

const NOTICE = /^\[(\d+) bytes of earlier output dropped: a background process keeps its last 50 bytes\]\n$/

/** Bytes delivered and bytes reported dropped, from what a reader got. */
const account = (got: ReadonlyArray<ProcessOutput>) => {
  let delivered = 0
  let dropped = 0
  for (const chunk of got) {
    const notice = NOTICE.exec(chunk.text)
    if (notice === null) delivered += Buffer.byteLength(chunk.text)
    else dropped += Number(notice[1])
  }
  return { delivered, dropped }
}

describe("OutputLog", () => {
  it.effect("a reader that stalls costs nothing; when it resumes every byte was either given or reported dropped", () =>
    Effect.gen(function*() {
      const log = new OutputLog(50)
      const resume = yield* Deferred.make<void>()
      const got: Array<ProcessOutput> = []
      const reader = yield* log.stream.pipe(
        Stream.runForEach((chunk) =>
          Effect.andThen(Effect.sync(() => got.push(chunk)), got.length === 1 ? Deferred.await(resume) : Effect.void)
        ),
        Effect.forkChild
      )
      log.append({ stream: "stdout", text: "first-chunk\n" })
      yield* Effect.yieldNow
      for (let i = 0; i < 100; i++) log.append({ stream: "stdout", text: `line ${String(i).padStart(3, "0")}\n` })
      log.end()
      yield* Deferred.succeed(resume, undefined)
      yield* Fiber.join(reader)
      const { delivered, dropped } = account(got)
      assert.strictEqual(delivered + dropped, 12 + 100 * 9)
      assert.isAbove(dropped, 0)
      assert.strictEqual(got[0]!.text, "first-chunk\n")
      // The newest output always arrives, in order.
      assert.deepStrictEqual(got.slice(-3).map((c) => c.text), ["line 097\n", "line 098\n", "line 099\n"])
    }))

  it.effect("a late reader gets the last cap bytes, cut at a character boundary, after a notice", () =>
    Effect.gen(function*() {
      const log = new OutputLog(50)
      log.append({ stream: "stdout", text: "é".repeat(40) })
      log.end()
      const got = yield* Stream.runCollect(log.stream)
      assert.deepStrictEqual(got, [
        {
          stream: "stderr",
          text: "[30 bytes of earlier output dropped: a background process keeps its last 50 bytes]\n"
        },
        { stream: "stdout", text: "é".repeat(25) }
      ])
    }))

  it.effect("every reader gets all of it, and readers of an ended log end", () =>
    Effect.gen(function*() {
      const log = new OutputLog(1024)
      const early = yield* Effect.forkChild(Stream.runCollect(log.stream))
      yield* Effect.yieldNow
      log.append({ stream: "stdout", text: "a" })
      log.append({ stream: "stderr", text: "b" })
      log.end()
      log.append({ stream: "stdout", text: "after the end" })
      const expected = [{ stream: "stdout", text: "a" }, { stream: "stderr", text: "b" }]
      assert.deepStrictEqual(yield* Fiber.join(early), expected)
      assert.deepStrictEqual(yield* Stream.runCollect(log.stream), expected)
    }))
})
