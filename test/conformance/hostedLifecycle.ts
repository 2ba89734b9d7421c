/**
 * The lifecycle of a hosted runtime (its sandbox with a provider), run against each provider's
 * stand-in in CI and by the opt-in live tests: pause and resume keep the files (and the processes,
 * where memory survives); a kept-alive sandbox is attached to by its session id; the reaper removes
 * a dead owner's sandbox and leaves a live owner's; a server that dies at start fails the start
 * with its exit code and output; release leaves nothing. Each case runs only where the target has
 * the capability. The provider's own listing is the witness of what is left, not the runtime's word.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { RuntimeStartError } from "../../src/index.ts"
import { buildRuntime, startError } from "../docker/helpers.ts"
import { killed, ownerProcess } from "../kubernetes/ownerProcess.ts"
import type { HostedLifecycleTarget } from "./hostedTarget.ts"

export type { HostedLifecycleTarget } from "./hostedTarget.ts"

/** A fresh session id: lower case and short, a valid container, pod and sandbox name on every provider. */
const newSession = () => `lc-${randomBytes(5).toString("hex")}`

/** A case's budget: a few starts and releases of a sandbox on a loaded machine. */
const CASE_TIMEOUT = 180_000

/** The owner script, absolute: `ownerProcess` runs it as is. */
const OWNER_SCRIPT = join(import.meta.dirname, "fixtures", "lifecycleOwner.ts")

/** What the provider lists of the session, once it has (or has not) something: it works on its own time. */
const awaitSandboxes = (target: HostedLifecycleTarget, sessionId: string, present: boolean, within: Duration.Input) =>
  Effect.promise(() => target.sandboxes(sessionId)).pipe(
    Effect.repeat({ until: (ids) => ids.length > 0 === present, schedule: Schedule.spaced("250 millis") }),
    Effect.timeoutOrElse({
      duration: within,
      orElse: () =>
        Effect.promise(() => target.sandboxes(sessionId)).pipe(
          Effect.flatMap((ids) =>
            Effect.die(new Error(`session ${sessionId} still lists: ${ids.join(", ") || "nothing"}`))
          )
        )
    })
  )

/** The provider lists something of the session now. */
const assertListed = (target: HostedLifecycleTarget, sessionId: string) =>
  Effect.promise(() => target.sandboxes(sessionId)).pipe(
    Effect.map((ids) => assert.isNotEmpty(ids, `the provider lists nothing of session ${sessionId}`))
  )

/** Gone within a release's time. */
const awaitGone = (target: HostedLifecycleTarget, sessionId: string) =>
  awaitSandboxes(target, sessionId, false, "30 seconds")

/** A file in the workspace, written by one shell and read back by the next. */
const KEPT = "lifecycle-kept.txt"

export const hostedLifecycleConformance = (target: HostedLifecycleTarget) =>
  describe(`hosted lifecycle: ${target.name}`, () => {
    const { pause, attach, reaper, dyingServer } = target

    it.live(
      "release leaves nothing: the provider lists no sandbox of the session",
      () =>
        Effect.scoped(Effect.gen(function*() {
          const sessionId = newSession()
          const { rt, release } = yield* buildRuntime(target.layer({ sessionId }))
          assert.strictEqual((yield* rt.runCommand("echo up")).content.trim(), "up")
          yield* assertListed(target, sessionId)
          yield* release
          yield* awaitGone(target, sessionId)
        })),
      CASE_TIMEOUT
    )

    if (pause !== undefined) {
      const memory = pause.memorySurvives ? ", a background process and a shell variable" : ""
      it.live(`pause then resume keeps the files${memory}`, () =>
        Effect.scoped(Effect.gen(function*() {
          const sessionId = newSession()
          const { rt, release } = yield* buildRuntime(target.layer({ sessionId }))
          const file = `${rt.info.workspace}/${KEPT}`
          yield* rt.runCommand(`echo kept > ${file}`)
          if (pause.memorySurvives) {
            yield* rt.runCommand("export LIFECYCLE_KEPT=yes; sleep 600 >/dev/null 2>&1 & LIFECYCLE_PID=$!")
          }
          yield* rt.pause
          yield* rt.resume
          assert.strictEqual((yield* rt.runCommand(`cat ${file}`)).content.trim(), "kept")
          if (pause.memorySurvives) {
            const alive = yield* rt.runCommand("echo $LIFECYCLE_KEPT; kill -0 $LIFECYCLE_PID && echo running")
            assert.strictEqual(alive.content.trim(), "yes\nrunning")
          }
          yield* release
          yield* awaitGone(target, sessionId)
        })), CASE_TIMEOUT)
    }

    if (attach !== undefined) {
      it.live(
        "a kept-alive sandbox is attached to by its session id and sees the same files; release leaves nothing",
        () =>
          Effect.scoped(Effect.gen(function*() {
            const sessionId = newSession()
            const first = yield* buildRuntime(target.layer({ sessionId, keepRuntimeAlive: true }))
            yield* first.rt.runCommand(`echo kept > ${first.rt.info.workspace}/${KEPT}`)
            yield* first.release
            yield* assertListed(target, sessionId)
            const second = yield* buildRuntime(attach.layer(sessionId))
            assert.strictEqual(second.rt.info.id, sessionId)
            assert.strictEqual(
              (yield* second.rt.runCommand(`cat ${second.rt.info.workspace}/${KEPT}`)).content.trim(),
              "kept"
            )
            yield* second.release
            yield* awaitGone(target, sessionId)
          })),
        CASE_TIMEOUT
      )
    }

    if (reaper !== undefined) {
      it.live(
        "the reaper removes a dead owner's sandbox and leaves a live owner's",
        () =>
          Effect.scoped(Effect.gen(function*() {
            const reapEvery = "1 second"
            const dead = newSession()
            const live = newSession()
            const { module, args } = reaper.owner()
            const { child } = yield* ownerProcess(
              OWNER_SCRIPT,
              [module, JSON.stringify(args), JSON.stringify({ sessionId: dead, reapEvery })],
              "120 seconds"
            )
            yield* assertListed(target, dead)
            // This process is the live owner; its runtime's reaper is the one that must find the orphan.
            const { rt, release } = yield* buildRuntime(target.layer({ sessionId: live, reapEvery }))
            yield* killed(child)
            yield* awaitSandboxes(target, dead, false, target.removalWithin ?? "60 seconds")
            yield* assertListed(target, live)
            assert.strictEqual((yield* rt.runCommand("echo alive")).content.trim(), "alive")
            yield* release
            yield* awaitGone(target, live)
          })),
        CASE_TIMEOUT
      )
    }

    if (dyingServer !== undefined) {
      it.live(
        "a server that dies at start fails the start within 10 s with its exit code and output",
        () =>
          Effect.scoped(Effect.gen(function*() {
            const sessionId = newSession()
            const started = Date.now()
            const error = yield* startError(dyingServer.layer(sessionId))
            const elapsed = Date.now() - started
            assert.instanceOf(error, RuntimeStartError)
            const { message, reason, exitCode, output } = error as RuntimeStartError
            assert.match(message, new RegExp(`exit(ed with)? code ${dyingServer.exitCode}\\b`))
            assert.include(message, dyingServer.output)
            // The same as data: a caller matches on the reason and reads the code and output.
            assert.deepStrictEqual({ reason, exitCode }, { reason: "server-exited", exitCode: dyingServer.exitCode })
            assert.include(output ?? "", dyingServer.output)
            assert.isBelow(elapsed, 10_000, message)
            yield* awaitGone(target, sessionId)
          })),
        CASE_TIMEOUT
      )
    }
  })
