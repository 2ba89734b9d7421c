/**
 * What E2BRuntime does with the faults every stand-in injects (../faults.ts), through the real SDK:
 * a 429 with and without `Retry-After`, E2B's 503 "no capacity" and other 5xx, a slow create
 * (held until the test lets it go), and a connection cut mid-request. Nothing hangs, nothing is
 * left behind. The rows of docs/runtimes/README.md's table for E2B are these cases.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { E2BRuntime, type E2BRuntimeOptions } from "../../../src/e2b.ts"
import { type ProviderReason, RuntimeStartError } from "../../../src/index.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import type { FaultMatch } from "../faults.ts"
import { inSandbox, standinOptions, suiteStandin } from "./fixture.ts"

/** The create requests. */
const CREATE: FaultMatch = { method: "POST", path: /^\/v2\/sandboxes$/ }

/** E2B's 503 when no node can take the sandbox (placement_errors.go). */
const NO_CAPACITY =
  "Failed to place sandbox: not enough capacity for the requested resources right now, please retry shortly"

/** A schedule that retries at once, `times` times: the cases count attempts, not seconds. */
const quick = (times: number) => Schedule.spaced("10 millis").pipe(Schedule.upTo({ times }))

describeDocker("E2BRuntime under injected faults (stand-in)", () => {
  const standinOf = suiteStandin()

  /** The faults met since `before`. */
  const hitsSince = (before: number) => standinOf().faults.hits.slice(before).map((hit) => `${hit.method} ${hit.path}`)

  /** A start that fails: its message and the provider's reason, once no sandbox is left. */
  const refused = (options: E2BRuntimeOptions, message: string, reason: ProviderReason) =>
    Effect.gen(function*() {
      const error = yield* startError(E2BRuntime.layer(standinOptions(standinOf(), options)))
      assert.instanceOf(error, RuntimeStartError)
      assert.strictEqual((error as RuntimeStartError).message, message)
      assert.strictEqual((error as RuntimeStartError).provider?.reason, reason)
      assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
    })

  /** A runtime that starts, despite the faults queued, and runs a command. */
  const startsAnyway = (options: E2BRuntimeOptions) =>
    inSandbox(standinOf(), options, (rt) =>
      Effect.gen(function*() {
        const obs = yield* rt.runCommand("echo started")
        assert.strictEqual(obs.content.trim(), "started")
      }))

  it.live("a 429 without Retry-After: retried under providerRetry, then E2B's 429 text", () =>
    Effect.gen(function*() {
      const before = standinOf().faults.hits.length
      standinOf().faults.inject(CREATE, {
        kind: "status",
        status: 429,
        message: "Rate limit exceeded for sandbox creation"
      }, 3)
      yield* refused(
        { providerRetry: quick(1) },
        "E2B could not create a sandbox from template effect-sandbox-runtime: Rate limit exceeded, please try again " +
          "later - Rate limit exceeded for sandbox creation",
        "rate-limited"
      )
      // Once and a retry; the SDK sends no more without a Retry-After.
      assert.deepStrictEqual(hitsSince(before), ["POST /v2/sandboxes", "POST /v2/sandboxes"])
      // One refusal is left: the schedule's retry gets the sandbox.
      yield* startsAnyway({ providerRetry: quick(1) })
      assert.strictEqual(standinOf().faults.hits.length - before, 3)
    }), 120_000)

  it.live(
    "a 429 with Retry-After is waited out as E2B asks, even with no providerRetry at all",
    () =>
      Effect.gen(function*() {
        const before = standinOf().faults.hits.length
        standinOf().faults.inject(CREATE, {
          kind: "status",
          status: 429,
          message: "Rate limit exceeded for sandbox creation",
          retryAfterSeconds: 1
        })
        yield* startsAnyway({ providerRetry: Schedule.recurs(0) })
        assert.deepStrictEqual(hitsSince(before), ["POST /v2/sandboxes"])
      }),
    120_000
  )

  it.live(
    "E2B's 503 (no capacity) is waited out under providerRetry; given up on, its text and `unavailable`",
    () =>
      Effect.gen(function*() {
        standinOf().faults.inject(CREATE, { kind: "status", status: 503, message: NO_CAPACITY }, 2)
        yield* startsAnyway({ providerRetry: quick(2) })
        standinOf().faults.inject(CREATE, { kind: "status", status: 503, message: NO_CAPACITY }, 2)
        yield* refused(
          { providerRetry: quick(1) },
          `E2B could not create a sandbox from template effect-sandbox-runtime: Service temporarily unavailable, ` +
            `please retry - ${NO_CAPACITY}`,
          "unavailable"
        )
      }),
    120_000
  )

  it.live(
    "a 500 on create is retried; a 502 from a sandbox's envd is the SDK's \"not running\": the start fails",
    () =>
      Effect.gen(function*() {
        const before = standinOf().faults.hits.length
        standinOf().faults.inject(CREATE, { kind: "status", status: 500, message: "Failed to place sandbox" })
        yield* startsAnyway({ providerRetry: quick(2) })
        assert.deepStrictEqual(hitsSince(before), ["POST /v2/sandboxes"])
        // E2B's proxy answers 502 for a sandbox that is not running; the SDK says so, and it is no retry.
        standinOf().faults.inject({ method: "POST", path: "/process.Process/Start" }, {
          kind: "status",
          status: 502,
          message: "bad gateway"
        })
        yield* refused(
          { providerRetry: quick(2) },
          "E2B could not start the action server: Sandbox is probably not running anymore",
          "not-found"
        )
      }),
    120_000
  )

  /**
   * The next create held until `answer`; `reached` waits until the stand-in holds it (`wasReached`
   * says whether it has).
   */
  const holdCreate = Effect.gen(function*() {
    const before = standinOf().faults.hits.length
    const answer = yield* Deferred.make<void>()
    standinOf().faults.inject(CREATE, { kind: "hold", until: Effect.runPromise(Deferred.await(answer)) })
    const wasReached = () => standinOf().faults.hits.length > before
    return {
      wasReached,
      reached: Effect.sleep("50 millis").pipe(Effect.repeat({ until: wasReached })),
      answer: Deferred.succeed(answer, undefined)
    }
  })

  it.live(
    "a slow create is waited for; interrupted while E2B holds it, the sandbox is killed once it answers",
    () =>
      Effect.gen(function*() {
        const held = yield* holdCreate
        // Held: the start waits (no deadline of ours but the SDK's request time-out, 60 s).
        const starting = yield* buildRuntime(E2BRuntime.layer(standinOptions(standinOf()))).pipe(
          Effect.flatMap(({ release }) => release),
          Effect.scoped,
          Effect.forkChild
        )
        yield* held.reached
        const interrupted = yield* Fiber.interrupt(starting).pipe(Effect.forkChild)
        yield* held.answer
        yield* Fiber.join(interrupted)
        // The create completed on E2B's side, and the interrupted start killed what it made.
        assert.deepStrictEqual(yield* Effect.promise(() => standinOf().containers()), [])
        assert.deepStrictEqual([...standinOf().sandboxes.keys()], [])
        // Held and let go: the start just takes longer.
        const later = yield* holdCreate
        const slow = yield* startsAnyway({}).pipe(Effect.forkChild)
        yield* later.reached
        yield* later.answer
        yield* Fiber.join(slow)
      }),
    120_000
  )

  it.live(
    "a create slower than requestTimeoutMs fails the start; what E2B makes after it ends at its idle timeout",
    () =>
      Effect.gen(function*() {
        const held = yield* holdCreate
        yield* refused(
          { requestTimeoutMs: 2_000, idleTimeout: "3 seconds" },
          "E2B could not create a sandbox from template effect-sandbox-runtime: The operation was aborted due to timeout",
          "timeout"
        )
        yield* held.answer
        // E2B finishes a create it took (on a loaded machine the request may not have reached it in
        // the 2 s): nobody renews that sandbox, and its time-out ends it.
        if (held.wasReached()) {
          yield* Effect.sleep("100 millis").pipe(Effect.repeat({ until: () => standinOf().sandboxes.size > 0 }))
        }
        const left = Effect.promise(() => standinOf().containers())
        yield* Effect.sleep("200 millis").pipe(
          Effect.andThen(left),
          Effect.repeat({ until: (ids) => ids.length === 0 })
        )
      }),
    120_000
  )

  it.live(
    "a connection cut mid-request fails that call with the SDK's text, and leaves nothing behind",
    () =>
      Effect.gen(function*() {
        standinOf().faults.inject(CREATE, { kind: "cut" })
        // Not retried: E2B may have made the sandbox before the connection went.
        yield* refused(
          { providerRetry: quick(2) },
          "E2B could not create a sandbox from template effect-sandbox-runtime: fetch failed",
          "unknown"
        )
        // A renewal cut mid-request is logged and the next one goes through: the sandbox lives on.
        yield* inSandbox(standinOf(), { idleTimeout: "3 seconds" }, (rt) =>
          Effect.gen(function*() {
            const id = [...standinOf().sandboxes.keys()].at(-1)!
            const before = standinOf().calls.length
            standinOf().faults.inject({ method: "POST", path: `/sandboxes/${id}/timeout` }, { kind: "cut" })
            yield* Effect.sleep("200 millis").pipe(
              Effect.repeat({
                until: () => standinOf().calls.slice(before).some((call) => call.path === `/sandboxes/${id}/timeout`)
              })
            )
            const obs = yield* rt.runCommand("echo renewed")
            assert.strictEqual(obs.content.trim(), "renewed")
          }))
      }),
    120_000
  )
})
