/**
 * DaytonaRuntime against the rules Daytona's API enforces, as the stand-in enforces them: pause
 * only for sandboxes of a class that pauses, a list that lags the creates, the SDK's waits for a
 * state bounded by the runtime's start, and the refusals while a state change is under way.
 */
import { Daytona } from "@daytonaio/sdk"
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { RuntimeStartError, SandboxConfig } from "../../../src/index.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { CONTAINER_SNAPSHOT, CREATE, daytonaLayer, gate, until, useStandIn } from "./infra.ts"
import type { DaytonaStandIn } from "./server.ts"

/** The stand-in's record of the session's sandbox. */
const sandboxOf = (standIn: DaytonaStandIn, sessionId: string) =>
  [...standIn.sandboxes.byId.values()].find((x) => x.labels["effect-sandbox.session"] === sessionId)!

const creates = (standIn: DaytonaStandIn) =>
  standIn.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").length

/** A hold on every state change the stand-in starts from now, and its release. */
const holdStateChanges = (standIn: DaytonaStandIn) => {
  const held = gate()
  standIn.sandboxes.hold = held.promise
  return () => {
    standIn.sandboxes.hold = undefined
    held.open()
  }
}

/** Daytona refused `action` of the sandbox (once or more: each retry until the change was done), and nothing else. */
const assertRefusedOnly = (standIn: DaytonaStandIn, sandboxId: string, action: string) => {
  const refused = standIn.sandboxes.refusals.filter((r) => r.sandboxId === sandboxId)
  assert.isNotEmpty(refused)
  for (const one of refused) {
    assert.deepStrictEqual([one.action, one.status, one.message], [action, 409, "Sandbox state change in progress"])
  }
}

const keep = new SandboxConfig({ keepRuntimeAlive: true })

describeDocker("DaytonaRuntime and Daytona's rules (stand-in)", () => {
  const standIn = useStandIn()

  it.live(
    "a sandbox of class container: no pause capability, and pause is a RuntimePauseError saying why, Daytona not asked",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(
          daytonaLayer(s, { snapshot: CONTAINER_SNAPSHOT, sessionId: "dtn-class" })
        )
        const sandbox = sandboxOf(s, "dtn-class")
        assert.strictEqual(sandbox.sandboxClass, "container")
        assert.isFalse(rt.info.capabilities.pause)
        const why = `Daytona pauses only linux-vm and windows sandboxes, and sandbox ${sandbox.id} is of class ` +
          `container (its snapshot's): make the snapshot with --sandbox-class linux-vm ` +
          `(docs/runtimes/daytona.md, "Pause, resume, attach")`
        const paused = yield* Effect.flip(rt.pause)
        assert.deepStrictEqual([paused._tag, paused.message], ["RuntimePauseError", why])
        const resumed = yield* Effect.flip(rt.resume)
        assert.deepStrictEqual([resumed._tag, resumed.message], ["RuntimePauseError", why])
        assert.isFalse(s.requests.some((r) => r.path.endsWith("/pause")))
        assert.strictEqual((yield* rt.runCommand("echo still-running")).content, "still-running")
        // What Daytona answers a pause of such a sandbox, which the runtime no longer sends.
        const client = new Daytona({ apiKey: s.apiKey, apiUrl: s.apiUrl })
        const refused = yield* Effect.promise(() =>
          client.get(sandbox.id).then((one) => one.pause()).then(() => "paused", (error: Error) => error.message)
        )
        assert.strictEqual(refused, "Pausing is not supported for this sandbox")
        yield* release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live(
    "a session's commands run in its one shell, as Daytona's daemon runs them: state carries over, and an exec leaves no exit code",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const made = yield* Effect.promise(() =>
          s.sandboxes.create({ snapshot: CONTAINER_SNAPSHOT, user: "openhands", name: "dtn-session-shell" })
        )
        const { process } = yield* Effect.promise(() =>
          new Daytona({ apiKey: s.apiKey, apiUrl: s.apiUrl }).get(made.id)
        )
        const run = (session: string, command: string) =>
          Effect.promise(() =>
            process.executeSessionCommand(session, { command }).then(
              (ran) => [ran.exitCode, ran.stdout, ran.stderr],
              (error: Error) => [error.message]
            )
          )
        yield* Effect.promise(() => process.createSession("one"))
        assert.deepStrictEqual(yield* run("one", "cd /tmp && export KEPT=yes; echo oops >&2"), [0, "", "oops\n"])
        assert.deepStrictEqual(yield* run("one", "pwd; echo $KEPT"), [0, "/tmp\nyes\n", ""])
        // An `exec` replaces the session's shell: the command's output is logged, its exit code never.
        yield* Effect.promise(() => process.createSession("two"))
        const { cmdId } = yield* Effect.promise(() =>
          process.executeSessionCommand("two", { command: "exec sh -c 'echo replaced; exit 3'", runAsync: true })
        )
        const logs = yield* Effect.promise(() => process.getSessionCommandLogs("two", cmdId!)).pipe(
          Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (got) => got.stdout === "replaced\n" })
        )
        assert.strictEqual(logs.output, "\x01\x01\x01replaced\n")
        // Nothing is left to run the next command, which ends with the shell.
        assert.deepStrictEqual(yield* run("two", "echo never"), ["session cancelled"])
        const replaced = yield* Effect.promise(() => process.getSessionCommand("two", cmdId!))
        assert.isUndefined(replaced.exitCode)
        yield* Effect.promise(() => s.sandboxes.destroy(made))
      }),
    60_000
  )
  it.live(
    "an attach while the list lags finds the session's sandbox by its name: no second sandbox",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const caughtUp = s.sandboxes.lagList()
        yield* Effect.gen(function*() {
          const first = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-lag", sandbox: keep }))
          yield* first.rt.runCommand("echo first > /workspace/who.txt")
          yield* first.release
          // The list does not show it yet, as Daytona's may not right after a create.
          assert.deepStrictEqual(s.sandboxes.list({ "effect-sandbox.session": "dtn-lag" }), [])
          const before = creates(s)
          const second = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-lag" }))
          assert.strictEqual(creates(s), before)
          assert.strictEqual((yield* second.rt.runCommand("cat /workspace/who.txt")).content, "first")
          yield* second.release
          assert.strictEqual(sandboxOf(s, "dtn-lag").state, "destroyed")
        }).pipe(Effect.ensuring(Effect.sync(caughtUp)))
      }),
    120_000
  )

  it.live(
    "two runtimes starting one session at once make one sandbox: the second create is refused as a conflict",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s)
        // Both creates held until both were sent: each runtime looked for the session's sandbox and found none.
        const both = gate()
        s.faults.inject(CREATE, { kind: "hold", until: both.promise }, 2)
        const held = () => s.faults.hits.filter((hit) => hit.fault === "hold").length
        const heldBefore = held()
        const racing = yield* Effect.all(
          [
            Effect.result(buildRuntime(daytonaLayer(s, { sessionId: "dtn-race" }))),
            Effect.result(buildRuntime(daytonaLayer(s, { sessionId: "dtn-race" })))
          ],
          { concurrency: 2 }
        ).pipe(Effect.forkChild)
        yield* until(() => held() - heldBefore === 2).pipe(Effect.ensuring(Effect.sync(both.open)))
        const [one, other] = yield* Fiber.join(racing)
        const started = [one, other].filter((result) => result._tag === "Success")
        const refused = [one, other].flatMap((result) => result._tag === "Failure" ? [result.failure] : [])
        assert.deepStrictEqual([started.length, refused.length], [1, 1])
        const error = refused[0] as RuntimeStartError
        assert.strictEqual(error.provider?.reason, "conflict")
        assert.match(
          error.message,
          /^Daytona could not create a sandbox from snapshot effect-sandbox-runtime: Sandbox with name effect-sandbox-[0-9a-f]{24} already exists \(another runtime made this session's sandbox at the same time: attach to it instead\)$/
        )
        assert.strictEqual(creates(s) - before, 2)
        const sessions = [...s.sandboxes.byId.values()].filter((x) => x.labels["effect-sandbox.session"] === "dtn-race")
        assert.strictEqual(sessions.length, 1)
        // The winner's sandbox, left alone by the loser.
        assert.strictEqual(sessions[0]!.state, "started")
      }),
    120_000
  )

  it.live(
    "a create still pulling its snapshot is waited for as long as aliveTimeout, not the SDK's 60 s, then deleted once Daytona lets it",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const release = holdStateChanges(s)
        // Released once Daytona refused the delete of the sandbox still being made: the runtime waits that out.
        const letGo = yield* until(() => s.sandboxes.refusals.some((r) => r.action === "destroy")).pipe(
          Effect.andThen(Effect.sync(release)),
          Effect.forkChild
        )
        const error = (yield* startError(
          daytonaLayer(s, { sessionId: "dtn-pull", aliveTimeout: "3 seconds" })
        ).pipe(Effect.ensuring(Effect.sync(release)))) as RuntimeStartError
        yield* Fiber.join(letGo)
        assert.instanceOf(error, RuntimeStartError)
        assert.strictEqual(
          error.message,
          "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: Failed to create and start " +
            "sandbox within 3 seconds. Operation timed out."
        )
        const sandbox = sandboxOf(s, "dtn-pull")
        assertRefusedOnly(s, sandbox.id, "destroy")
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live(
    "attaching to a sandbox caught stopping waits out Daytona's 409 and starts it once stopped",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const first = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-stopping", sandbox: keep }))
        yield* first.release
        const sandbox = sandboxOf(s, "dtn-stopping")
        const release = holdStateChanges(s)
        const stopped = s.sandboxes.stop(sandbox)
        assert.strictEqual(sandbox.state, "stopping")
        const letGo = yield* until(() => s.sandboxes.refusals.some((r) => r.sandboxId === sandbox.id)).pipe(
          Effect.andThen(Effect.sync(release)),
          Effect.forkChild
        )
        const second = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-stopping" })).pipe(
          Effect.ensuring(Effect.sync(release))
        )
        yield* Fiber.join(letGo)
        yield* Effect.promise(() => stopped)
        assertRefusedOnly(s, sandbox.id, "start")
        assert.strictEqual(sandbox.state, "started")
        assert.strictEqual((yield* second.rt.runCommand("echo started-again")).content, "started-again")
        yield* second.release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )
})
