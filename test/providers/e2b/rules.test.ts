/**
 * The rules E2B enforces that a runtime meets only once it runs long or pauses, through
 * E2BRuntime against stand-ins that keep them (sandboxes.ts): a life capped from the start (20 s
 * on one of them instead of an hour: longer than a start on a loaded machine), a pause refused with 409 while the sandbox is in a transition (which the
 * SDK reads as "already paused"). A pause that cuts every connection into the sandbox is in
 * runtime.test.ts's pause case.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Schedule } from "effect"
import { E2BRuntime } from "../../../src/e2b.ts"
import { RuntimePauseError } from "../../../src/index.ts"
import { expectDisconnected } from "../../disconnected.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { docker } from "./docker.ts"
import { inSandbox, standinOptions, suiteStandin } from "./fixture.ts"
import type { Standin } from "./server.ts"

/** The sandbox the last runtime made. */
const lastSandbox = (standin: Standin) => [...standin.sandboxes.values()].at(-1)!

/** Wait (polling the stand-in's record) until `done` holds. */
const until = (done: () => boolean) => Effect.sleep("50 millis").pipe(Effect.repeat({ until: done }))

/** Retries every 100 ms for up to 30 s: a transition the test ends is waited out. */
const patient = Schedule.spaced("100 millis").pipe(Schedule.upTo({ times: 300 }))

describeDocker("E2B's rules, kept by the stand-in", () => {
  const standinOf = suiteStandin()
  const cappedOf = suiteStandin({ maxLengthSeconds: 20 })

  it.live(
    "a sandbox ends at its lifetime: renewals ask only what is left, and the disconnect names the cap",
    () =>
      Effect.gen(function*() {
        const standin = cappedOf()
        const { rt, release } = yield* buildRuntime(
          E2BRuntime.layer(standinOptions(standin, { lifetime: "20 seconds", idleTimeout: "3 seconds" }))
        )
        const { sandboxID } = lastSandbox(standin)
        yield* expectDisconnected(
          rt,
          `E2B ended sandbox ${sandboxID} at its lifetime of 20s (E2B caps a sandbox's life from its start or resume ` +
            "at the team plan's: 1 hour Hobby, 24 hours Pro; option lifetime)",
          "60 seconds"
        )
        const renewals = standin.calls
          .filter((call) => call.path === `/sandboxes/${sandboxID}/timeout`)
          .map((call) => (call.body as { timeout: number }).timeout)
        // Never more than the 3 s asked, and less once less was left: never refused.
        assert.isAbove(renewals.length, 0)
        assert.isTrue(renewals.every((timeout) => timeout <= 3), `renewals: ${renewals.join(", ")}`)
        assert.isBelow(renewals.at(-1)!, 3)
        yield* release
        assert.deepStrictEqual(yield* Effect.promise(() => standin.containers()), [])
      }),
    120_000
  )

  it.live(
    "a pause E2B refuses while it snapshots the sandbox is waited out, not taken for done",
    () =>
      Effect.gen(function*() {
        const standin = standinOf()
        yield* inSandbox(standin, { providerRetry: patient }, (rt) =>
          Effect.gen(function*() {
            const sandbox = lastSandbox(standin)
            const snapshotted = yield* Deferred.make<void>()
            const held = standin.transition(
              sandbox.sandboxID,
              "snapshotting",
              Effect.runPromise(Deferred.await(snapshotted))
            )
            const before = standin.calls.length
            const pausing = yield* rt.pause.pipe(Effect.forkChild)
            // E2B answered the pause with 409 (the SDK's "already paused"), and it was not believed.
            yield* until(() =>
              standin.calls.slice(before).some((call) => call.path === `/sandboxes/${sandbox.sandboxID}`)
            )
            assert.strictEqual(sandbox.state, "snapshotting")
            yield* Deferred.succeed(snapshotted, undefined)
            yield* Effect.promise(() => held)
            yield* Fiber.join(pausing)
            assert.strictEqual(sandbox.state, "paused")
            const inspected = yield* Effect.promise(() => docker.getContainer(sandbox.container).inspect())
            assert.strictEqual(inspected.State.Paused, true)
            yield* rt.resume
            const obs = yield* rt.runCommand("echo resumed")
            assert.strictEqual(obs.content.trim(), "resumed")
          }))
      }),
    120_000
  )

  it.live(
    "a pause of a sandbox E2B is killing fails as a RuntimePauseError saying it is gone",
    () =>
      Effect.gen(function*() {
        const standin = standinOf()
        const { rt, release } = yield* buildRuntime(
          E2BRuntime.layer(standinOptions(standin, { providerRetry: patient }))
        )
        const sandbox = lastSandbox(standin)
        const killed = yield* Deferred.make<void>()
        const held = standin.transition(sandbox.sandboxID, "killing", Effect.runPromise(Deferred.await(killed)))
        const error = yield* rt.pause.pipe(Effect.flip)
        assert.instanceOf(error, RuntimePauseError)
        assert.strictEqual(error.provider?.reason, "not-found")
        assert.strictEqual(
          error.message,
          `E2B could not pause sandbox ${sandbox.sandboxID}: Sandbox ${sandbox.sandboxID} not found`
        )
        yield* Deferred.succeed(killed, undefined)
        yield* Effect.promise(() => held)
        yield* release
        assert.deepStrictEqual(yield* Effect.promise(() => standin.containers()), [])
      }),
    120_000
  )
})
