/**
 * RemoteRuntime's policies are OpenHands' numbers (spec §9, §14): the exported schedules' delays,
 * stepped without sleeping, and a runtime API nobody answers (connection refused) retried by the
 * `providerRetry` schedule, then a start error naming the call, as unavailable.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { createServer } from "node:net"
import * as Remote from "../../src/remote.ts"
import { options, refusedStart, startFailure } from "./helpers.ts"

/** The first `steps` delays of `schedule` in ms, fewer when it ends. */
const delays = (schedule: Schedule.Schedule<unknown>, steps: number) =>
  Effect.gen(function*() {
    const step = yield* Schedule.toStep(schedule)
    const found: Array<number> = []
    for (let i = 0; i < steps; i++) {
      const exit = yield* Effect.exit(step(Date.now(), undefined))
      if (exit._tag === "Failure") break
      found.push(Duration.toMillis(exit.value[1]))
    }
    return found
  })

/** A loopback port nobody listens on (bound, then released). */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
)

describe("RemoteRuntime policies", () => {
  it.effect("API calls (the default providerRetry): 3 attempts, waiting 4 s then 8 s; action-server retries the same", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delays(Remote.apiRetrySchedule, 10), [4_000, 8_000])
      assert.deepStrictEqual(yield* delays(Remote.actionServerRetrySchedule, 10), [4_000, 8_000])
    }))

  it.effect("pod every 2 s; build retried and polled every 30 s; OpenHands' budgets", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* delays(Remote.podStatusSchedule, 4), [2_000, 2_000, 2_000, 2_000])
      assert.deepStrictEqual(yield* delays(Remote.buildRetrySchedule, 2), [30_000, 30_000])
      assert.deepStrictEqual(yield* delays(Remote.buildStatusSchedule, 2), [30_000, 30_000])
      assert.deepStrictEqual(
        [Remote.BUILD_TIMEOUT, Remote.DEFAULT_API_TIMEOUT, Remote.DEFAULT_ALIVE_TIMEOUT].map(Duration.toSeconds),
        [1_800, 180, 180]
      )
      assert.strictEqual(Remote.DEFAULT_API_URL, "http://localhost:8000")
    }))

  it.live("an API that refuses connections is tried as often as providerRetry says, then named", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      let attempts = 0
      const counted = Schedule.spaced("10 millis").pipe(
        Schedule.upTo({ times: 2 }),
        Schedule.tap(() => Effect.sync(() => attempts++))
      )
      const error = yield* startFailure(
        Remote.RemoteRuntime.layer(
          options({ url: `http://127.0.0.1:${port}` }, { sessionId: "s-down", providerRetry: counted })
        )
      )
      assert.strictEqual(
        error.message,
        `Remote could not look up session s-down: The runtime API at http://127.0.0.1:${port} did not answer ` +
          "GET /sessions/s-down: ECONNREFUSED"
      )
      assert.deepStrictEqual(refusedStart(error), { reason: "unavailable", status: undefined })
      assert.strictEqual(attempts, 2)
    }))
})
