/**
 * `listeningLine` (src/hosted/listeningLine.ts): the `/alive` wait of a cloud start begins at the
 * server's `listening` line in its command's output stream (E2B), however the stream cuts it into
 * chunks, or once the stream ends without it; never at another line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { listeningLine } from "../../src/hosted/listeningLine.ts"

const LINE = `effect-sandbox-server listening {"host":"0.0.0.0","port":8000}\n`

/** Whether `listening` has completed, without waiting for it. */
const heard = (listening: Effect.Effect<void>) => Effect.map(Effect.timeoutOption(listening, 0), Option.isSome)

describe("listeningLine", () => {
  it.effect("completes at the listening line, split over chunks, and not before", () =>
    Effect.gen(function*() {
      const line = yield* listeningLine()
      line.output("booting\neffect-sandbox-server list")
      line.output(`ening {"host":"0.0.0.0",`)
      assert.isFalse(yield* heard(line.listening), "the line is not whole yet")
      line.output(`"port":8000}\nmore`)
      assert.isTrue(yield* heard(line.listening))
    }))

  it.effect("other lines, one mentioning listening, and a long line without end do not complete it", () =>
    Effect.gen(function*() {
      const line = yield* listeningLine()
      line.output(`a line about effect-sandbox-server listening \n${"x".repeat(100_000)}`)
      line.output(`${"y".repeat(100_000)}\n`)
      assert.isFalse(yield* heard(line.listening))
      line.output(LINE)
      assert.isTrue(yield* heard(line.listening))
    }))

  it.effect("another line is heard apart (the image server's marker): each completes at its own", () =>
    Effect.gen(function*() {
      const line = yield* listeningLine("effect-sandbox: the image's server")
      line.output("effect-sandbox: the image")
      line.output("'s server\n")
      assert.isTrue(yield* heard(line.found))
      assert.deepStrictEqual([line.marked(), line.heard()], [true, false])
      assert.isFalse(yield* heard(line.listening))
      line.output(LINE)
      assert.isTrue(yield* heard(line.listening))
      assert.isTrue(line.heard())
    }))

  it.effect("a stream that ends without the lines completes both: the wait then polls", () =>
    Effect.gen(function*() {
      const line = yield* listeningLine()
      line.output("Error: cannot find module\n")
      assert.isFalse(yield* heard(line.found))
      line.ended()
      assert.isTrue(yield* heard(line.listening))
      assert.isTrue(yield* heard(line.found))
      // Ended, not heard: a driver tells the two apart (Daytona asks the daemon then).
      assert.deepStrictEqual([line.marked(), line.heard()], [false, false])
    }))
})
