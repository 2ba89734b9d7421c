/**
 * E2B's cap on a sandbox's life, at the driver's keep-alive (src/providers/e2b/lifetime.ts), its
 * clock a TestClock: renewals ask what is left of the life once that is less than the idle
 * timeout, stop at the cap, stop on E2B's 400 "Max instance length exceeded" and on a sandbox E2B
 * no longer has, and the disconnect names the cap when the sandbox ended there. Through the real
 * SDK against the stand-in.
 */
import { assert, it } from "@effect/vitest"
import { Sandbox } from "e2b"
import { Effect, Logger, References, Schedule } from "effect"
import { TestClock } from "effect/testing"
import type { E2BRuntimeOptions } from "../../../src/e2b.ts"
import { makeProviderCall } from "../../../src/hosted/providerCall.ts"
import { classifyE2B } from "../../../src/providers/e2b/classify.ts"
import { type E2BBox, e2bDriver } from "../../../src/providers/e2b/driver.ts"
import type { Driver, SandboxSpec } from "../../../src/services/Driver.ts"
import { describeDocker } from "../../docker/infra.ts"
import { sdkOptions, standinOptions, suiteStandin } from "./fixture.ts"

describeDocker("E2B's lifetime cap at the keep-alive (stand-in, TestClock)", () => {
  const standinOf = suiteStandin()

  /**
   * The driver (no retries) with a sandbox of the `base` template, killed with the scope, the
   * warnings it logs, and the renewals the stand-in received for it.
   */
  const withSandbox = (options: E2BRuntimeOptions = {}) =>
    Effect.gen(function*() {
      const driver: Driver<E2BBox> = yield* e2bDriver.connect(
        standinOptions(standinOf(), { template: "base", ...options }),
        makeProviderCall("E2B", classifyE2B, Schedule.recurs(0))
      )
      const made = yield* driver.create({ tags: { "effect-sandbox.test": "lifetime" } } as unknown as SandboxSpec)
      yield* Effect.addFinalizer(() => Effect.ignore(driver.destroy(made.sandbox)))
      const warnings: Array<string> = []
      const touch = driver.keepAlive!.touch(made.sandbox).pipe(
        Effect.provideService(
          References.CurrentLoggers,
          new Set([Logger.make((o) => void warnings.push(String(o.message)))])
        )
      )
      const renewals = () =>
        standinOf().calls.filter((call) => call.path === `/sandboxes/${made.id}/timeout`).map((call) => call.body)
      return { driver, made, touch, warnings, renewals }
    })

  it.effect(
    "renewals ask what is left of the hour once it is less than the idle timeout, then stop",
    () =>
      Effect.gen(function*() {
        const { driver, made, renewals, touch, warnings } = yield* withSandbox({ idleTimeout: "10 minutes" })
        yield* TestClock.adjust("45 minutes")
        yield* touch
        yield* TestClock.adjust("8 minutes")
        yield* touch
        yield* TestClock.adjust("4 minutes")
        yield* touch
        yield* TestClock.adjust("3 minutes")
        yield* touch
        yield* touch
        assert.deepStrictEqual(renewals(), [{ timeout: 600 }, { timeout: 420 }, { timeout: 180 }])
        assert.deepStrictEqual(warnings, [
          `E2B sandbox ${made.id} ends in 7m, at its lifetime of 1h (E2B caps a sandbox's life from its start or ` +
          "resume at the team plan's: 1 hour Hobby, 24 hours Pro; option lifetime); renewals cannot extend it."
        ])
        // Ended by E2B at the cap: the disconnect says so.
        yield* Effect.promise(() => Sandbox.kill(made.id, sdkOptions(standinOf())))
        assert.deepStrictEqual(yield* driver.state!(made.sandbox), {
          _tag: "gone",
          why: `E2B ended sandbox ${made.id} at its lifetime of 1h (E2B caps a sandbox's life from its start or ` +
            "resume at the team plan's: 1 hour Hobby, 24 hours Pro; option lifetime)"
        })
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("a Pro team's lifetime (24 hours) renews past the hour", () =>
    Effect.gen(function*() {
      const { renewals, touch } = yield* withSandbox({ idleTimeout: "10 minutes", lifetime: "24 hours" })
      yield* TestClock.adjust("2 hours")
      yield* touch
      assert.deepStrictEqual(renewals(), [{ timeout: 600 }])
    }).pipe(Effect.scoped), 60_000)

  it.effect("E2B's 400 \"Max instance length exceeded\" ends the renewals, once", () =>
    Effect.gen(function*() {
      const { made, touch, warnings } = yield* withSandbox()
      const before = standinOf().faults.hits.length
      standinOf().faults.inject(
        { method: "POST", path: `/sandboxes/${made.id}/timeout` },
        { kind: "status", status: 400, message: "Max instance length exceeded" },
        5
      )
      yield* touch
      yield* TestClock.adjust("5 minutes")
      yield* touch
      yield* touch
      assert.strictEqual(standinOf().faults.hits.length - before, 1)
      assert.deepStrictEqual(warnings, [
        `E2B could not renew the timeout of sandbox ${made.id}: 400: Max instance length exceeded`
      ])
      standinOf().faults.clear()
    }).pipe(Effect.scoped), 60_000)

  it.effect(
    "a sandbox E2B no longer has is not renewed again, and its end is not put on the cap",
    () =>
      Effect.gen(function*() {
        const { driver, made, renewals, touch } = yield* withSandbox()
        yield* Effect.promise(() => Sandbox.kill(made.id, sdkOptions(standinOf())))
        yield* touch
        yield* TestClock.adjust("5 minutes")
        yield* touch
        assert.strictEqual(renewals().length, 1)
        assert.deepStrictEqual(yield* driver.state!(made.sandbox), {
          _tag: "gone",
          why: `E2B no longer has sandbox ${made.id} (killed, or its timeout ran out)`
        })
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("a lifetime or idle timeout under 3 seconds is refused", () =>
    Effect.gen(function*() {
      const error = yield* e2bDriver.connect(
        standinOptions(standinOf(), { lifetime: "2 seconds" }),
        makeProviderCall("E2B", classifyE2B, Schedule.recurs(0))
      ).pipe(Effect.flip, Effect.scoped)
      assert.strictEqual(
        error.message,
        "E2BRuntime options: lifetime must be at least 3 seconds (the timeout is renewed every third of it)."
      )
    }))
})
