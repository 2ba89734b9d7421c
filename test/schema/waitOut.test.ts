/**
 * The one retry rule (src/schema/waitOut.ts): a `Retry-After` read the same way for every provider
 * (seconds or an HTTP-date), waited out as a floor under the schedule, and one past two minutes
 * ending the waiting with the service's own refusal instead of holding the caller.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { LONGEST_RETRY_AFTER, retryAfterHeader, waitOut } from "../../src/schema/waitOut.ts"

const NOW = Date.parse("2026-11-29T12:00:00Z")

const millis = (value: string | null | undefined) => {
  const wait = retryAfterHeader(value, NOW)
  return wait === undefined ? undefined : Duration.toMillis(wait)
}

describe("Retry-After", () => {
  it("reads delta-seconds, whole or not, around blanks", () => {
    assert.strictEqual(millis("7"), 7_000)
    assert.strictEqual(millis(" 3 "), 3_000)
    assert.strictEqual(millis("1.5"), 1_500)
    assert.strictEqual(millis("0"), 0)
  })

  it("reads an HTTP-date as its distance from now, a past one as no wait", () => {
    assert.strictEqual(millis("Sun, 29 Nov 2026 12:00:30 GMT"), 30_000)
    assert.strictEqual(millis("Sunday, 29-Nov-26 12:01:00 GMT"), 60_000)
    assert.strictEqual(millis("Sun, 29 Nov 2026 11:00:00 GMT"), 0)
  })

  it("is nothing when absent, empty, negative or neither form", () => {
    for (const value of [undefined, null, "", "  ", "-5", "+5", "soon", "5 seconds", "0x10"]) {
      assert.isUndefined(millis(value), String(value))
    }
  })
})

/** A call that fails `failures` times with a wait of `retryAfter` asked, then answers; it counts its tries. */
const flaky = (failures: number, retryAfter: Duration.Duration) => {
  let tries = 0
  const call = Effect.suspend(() => ++tries <= failures ? Effect.fail({ retryAfter }) : Effect.succeed("answered"))
  return { call, tries: () => tries }
}

describe("waitOut", () => {
  it.effect("waits a Retry-After out before each try again, however short the schedule's own delay", () =>
    Effect.gen(function*() {
      const { call, tries } = flaky(2, Duration.seconds(30))
      const fiber = yield* Effect.forkChild(
        waitOut(call, Schedule.spaced("10 millis"), () => true, (error) => error.retryAfter)
      )
      yield* TestClock.adjust("29 seconds")
      assert.strictEqual(tries(), 1)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(tries(), 2)
      yield* TestClock.adjust("31 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "answered")
      assert.strictEqual(tries(), 3)
    }))

  it.effect("a Retry-After past two minutes ends the waiting at once with the refusal", () =>
    Effect.gen(function*() {
      const longer = Duration.sum(LONGEST_RETRY_AFTER, Duration.seconds(1))
      const { call, tries } = flaky(5, longer)
      const error = yield* Effect.flip(
        waitOut(call, Schedule.spaced("10 millis"), () => true, (failure) => failure.retryAfter)
      )
      assert.deepStrictEqual(error, { retryAfter: longer })
      assert.strictEqual(tries(), 1)
    }))

  it.effect("exactly two minutes is still waited out", () =>
    Effect.gen(function*() {
      const { call, tries } = flaky(1, LONGEST_RETRY_AFTER)
      const fiber = yield* Effect.forkChild(
        waitOut(call, Schedule.spaced("10 millis"), () => true, (error) => error.retryAfter)
      )
      yield* TestClock.adjust("121 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "answered")
      assert.strictEqual(tries(), 2)
    }))
})
