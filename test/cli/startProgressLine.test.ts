/**
 * The CLI's live progress line (src/cli/startProgressLine.ts) on a terminal stand-in: drawn in
 * place with the time since the start began, its time running on each second while a phase goes
 * on (the TestClock's ticks), a log line printed above it instead of glued to it, cut to the
 * terminal's width, and gone for good once the runtime is ready.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describeStart, liveLine } from "../../src/cli/startProgressLine.ts"
import type { StartProgressEvent } from "../../src/services/StartProgress.ts"

const CLEAR = "\r\x1b[K"

const event = (fields: Omit<StartProgressEvent, "status" | "elapsed">, seconds: number): StartProgressEvent => ({
  ...fields,
  status: "STARTING_RUNTIME",
  elapsed: Duration.seconds(seconds)
})

/** An event's words. */
const words = (fields: Omit<StartProgressEvent, "status" | "elapsed">) => describeStart(event(fields, 0))

describe("the CLI's progress line", () => {
  it.effect("is redrawn in place as the time runs on, logs go above it, and ready clears it", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      let now = 100_000
      const line = liveLine({ columns: 60, write: (text) => void written.push(text) }, () => now)
      const ticking = yield* Effect.forkChild(line.tick)

      yield* line.show(event({ phase: "creating", detail: "the Docker container" }, 0.5))
      assert.deepStrictEqual(written.splice(0), [`${CLEAR}[0.5s] creating the Docker container`])

      // A second later, with no event: the same line, its time on.
      now += 1000
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(written.splice(0), [`${CLEAR}[1.5s] creating the Docker container`])

      // A log line: the progress line is cleared, the log printed, the line drawn again below it.
      line.aside(() => written.push("INFO building runtime image\n"))
      assert.deepStrictEqual(written.splice(0), [
        CLEAR,
        "INFO building runtime image\n",
        `${CLEAR}[1.5s] creating the Docker container`
      ])

      // Cut to the terminal's width, less one column (a wrapped line could not be redrawn).
      yield* line.show(
        event({
          phase: "building-image",
          detail: "RUN apt-get update && apt-get install -y git",
          step: { index: 3, total: 8 }
        }, 2)
      )
      const drawn = written.splice(0)
      assert.deepStrictEqual(drawn, [`${CLEAR}[2.0s] building the runtime image: step 3 of 8: RUN apt-get`])
      assert.strictEqual(drawn[0]!.length - CLEAR.length, 59)

      // Ready: cleared, and nothing drawn after, neither by a tick nor by a log.
      yield* line.show(event({ phase: "ready", detail: "docker sandbox s" }, 2.1))
      assert.deepStrictEqual(written.splice(0), [CLEAR])
      now += 5000
      yield* TestClock.adjust("5 seconds")
      line.aside(() => written.push("INFO later\n"))
      assert.deepStrictEqual(written, ["INFO later\n"])
      // The ticking ended with the line.
      assert.isDefined(ticking.pollUnsafe())
      yield* Fiber.interrupt(ticking)
    }))

  it("says each phase in words", () => {
    assert.strictEqual(
      words({ phase: "pulling-image", detail: "debian:bookworm", bytes: { done: 12_300_000, total: 45_600_000 } }),
      "pulling debian:bookworm: 12.3 of 45.6 MB"
    )
    assert.strictEqual(
      words({ phase: "pulling-image", detail: "debian:bookworm", bytes: { done: 0, total: 0 } }),
      "pulling debian:bookworm"
    )
    assert.strictEqual(
      words({ phase: "starting-server", detail: "in sandbox b-1" }),
      "starting the action server in sandbox b-1"
    )
    assert.strictEqual(
      words({ phase: "waiting-for-server", detail: "the action server at http://h:1" }),
      "waiting for the action server at http://h:1"
    )
    assert.strictEqual(words({ phase: "ready", detail: "e2b sandbox s" }), "ready: e2b sandbox s")
  })
})
