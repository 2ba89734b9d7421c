/**
 * RunloopRuntime's lifecycle through the SDK against the stand-in: pause/resume are Runloop's
 * suspend and resume (the disk is kept, memory is not: files survive, the shell's variables do
 * not, and the server is started again), a kept-alive devbox is attached to again by its session
 * id (running, or suspended and resumed), and the reaper shuts down the devboxes of owners that
 * died on this host while leaving live owners', kept-alive ones and others' alone; a devbox shut
 * down under a runtime shows as disconnected.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { hostname } from "node:os"
import { SandboxConfig } from "../../../src/index.ts"
import { expectDisconnected } from "../../disconnected.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import type { Devbox } from "./devboxes.ts"
import { devboxOf, runloopLayer, useStandIn } from "./fixture.ts"
import type { RunloopStandIn } from "./server.ts"

const createCount = (s: RunloopStandIn) =>
  s.requests.filter((r) => r.method === "POST" && r.path === "/v1/devboxes").length

/** A pid that no process has any more (a child that ran and was waited for). */
const deadPid = () => spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim()

/** A devbox made on the stand-in directly, carrying `metadata`, once it runs. */
const devboxWith = (s: RunloopStandIn, metadata: Record<string, string>) =>
  Effect.gen(function*() {
    const devbox = s.devboxes.create({ blueprint_name: "effect-sandbox-runtime", metadata })
    yield* Effect.promise(() => s.devboxes.waitFor(() => devbox.status === "running" || undefined, 60_000))
    return devbox
  })

/**
 * Once an attach (started at `since`) waits on `devbox`'s state (a long poll), or has made another
 * devbox instead (the fault): true for the first, within half a minute.
 */
const waitedOnOrMade = (s: RunloopStandIn, devbox: Devbox, since: number, creates: number) =>
  Effect.sync(() =>
    s.requests.some((r) => r.at >= since && r.path === `/v1/devboxes/${devbox.id}/wait_for_status`) ||
    createCount(s) > creates
  ).pipe(Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (seen) => seen, times: 600 }))

/** The metadata a RunloopRuntime of this host with `pid` writes (plus `extra`). */
const owner = (pid: string, extra: Record<string, string> = {}) => ({
  "effect-sandbox.managed": "true",
  "effect-sandbox.owner.host": hostname(),
  "effect-sandbox.owner.pid": pid,
  "effect-sandbox.keep-alive": "false",
  ...extra
})

describeDocker("RunloopRuntime lifecycle (stand-in)", () => {
  const standIn = useStandIn({ holdMs: 2_000 })

  it.live(
    "pause suspends the devbox (disk kept, memory not), resume starts it and the server again",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-pause" }))
        const devbox = devboxOf(s, "rl-pause")
        yield* rt.runCommand("echo on-disk > /workspace/kept.txt; export KEPT=in-memory")
        // The start's claim (hosted/startOnce.ts) is in a process's command line, which a command in
        // the devbox can read; taking it again does nothing, and the next start makes its own.
        const seen = yield* rt.runCommand(
          "grep -aohE 'effect-sandbox-start-[0-9a-f]{16}' /proc/[0-9]*/cmdline | sort -u | tee /tmp/claims; " +
            "xargs -I{} mkdir -p /tmp/{} < /tmp/claims"
        )
        yield* rt.pause
        assert.strictEqual(devbox.status, "suspended")
        const container = yield* Effect.promise(() => devbox.container!.inspect())
        assert.isFalse(container.State.Running)
        yield* rt.resume
        assert.strictEqual(devbox.status, "running")
        const after = yield* rt.runCommand("cat /workspace/kept.txt; echo \"[$KEPT]\"")
        assert.strictEqual(after.content, "on-disk\n[]")
        const lifecycle = s.requests.filter((r) =>
          r.path === `/v1/devboxes/${devbox.id}/suspend` || r.path === `/v1/devboxes/${devbox.id}/resume`
        )
        assert.deepStrictEqual(lifecycle.map((r) => r.path.split("/").at(-1)), ["suspend", "resume"])
        // The server was launched twice (create, resume), each time given the key's digest, no key file written.
        const launches = s.requests.filter((r) => r.path === `/v1/devboxes/${devbox.id}/execute_async`)
        const digest = createHash("sha256").update(devbox.metadata["effect-sandbox.session-key"]!).digest("hex")
        assert.deepStrictEqual(
          launches.map((r) => (r.body as { command: string }).command.includes(`_SHA256=${digest} `)),
          [true, true]
        )
        const claims = launches.map((r) =>
          /effect-sandbox-start-[0-9a-f]{16}/.exec((r.body as { command: string }).command)?.[0]
        )
        assert.strictEqual(seen.content, claims[0])
        assert.notStrictEqual(claims[1], claims[0])
        assert.isFalse(s.requests.some((r) => r.path === `/v1/devboxes/${devbox.id}/write_file_contents`))
        yield* release
        assert.strictEqual(devbox.status, "shutdown")
      }),
    180_000
  )

  it.live(
    "a devbox shut down under the runtime shows as disconnected, with Runloop's reason",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-gone" }))
        const devbox = devboxOf(s, "rl-gone")
        yield* Effect.promise(() => s.devboxes.shutdown(devbox))
        // The watch looks every 5 s.
        yield* expectDisconnected(rt, `Runloop devbox ${devbox.id} is shutdown (api_shutdown)`, "15 seconds")
        yield* release
      }),
    120_000
  )

  it.live("a kept-alive devbox outlives its runtime and is attached to by session id", () =>
    Effect.gen(function*() {
      const s = standIn()
      const keep = new SandboxConfig({ keepRuntimeAlive: true })
      const first = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-attach", sandbox: keep }))
      yield* first.rt.runCommand("echo kept > /workspace/note.txt")
      yield* first.release
      const devbox = devboxOf(s, "rl-attach")
      assert.strictEqual(devbox.status, "running")
      assert.strictEqual(devbox.metadata["effect-sandbox.keep-alive"], "true")
      const creates = createCount(s)
      const second = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-attach" }))
      assert.strictEqual(createCount(s), creates)
      assert.strictEqual((yield* second.rt.runCommand("cat /workspace/note.txt")).content, "kept")
      yield* second.release
      assert.strictEqual(devbox.status, "shutdown")
    }), 180_000)

  it.live(
    "attaching to a suspended devbox resumes it and starts its server; the disk kept the files",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const keep = new SandboxConfig({ keepRuntimeAlive: true })
        const first = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-suspended", sandbox: keep }))
        yield* first.rt.runCommand("echo on-disk > /workspace/kept.txt")
        yield* first.rt.pause
        yield* first.release
        const devbox = devboxOf(s, "rl-suspended")
        assert.strictEqual(devbox.status, "suspended")
        const second = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-suspended" }))
        assert.strictEqual(devbox.status, "running")
        assert.strictEqual((yield* second.rt.runCommand("cat /workspace/kept.txt")).content, "on-disk")
        yield* second.release
        assert.strictEqual(devbox.status, "shutdown")
      }),
    180_000
  )

  it.live(
    "a session's devbox caught mid-transition (suspending) is waited for and attached to, not made twice",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const keep = new SandboxConfig({ keepRuntimeAlive: true })
        const first = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-transit", sandbox: keep }))
        yield* first.rt.runCommand("echo before > /workspace/transit.txt")
        yield* first.release
        const devbox = devboxOf(s, "rl-transit")
        let letGo!: () => void
        s.devboxes.holdTransitions(new Promise<void>((resolve) => letGo = resolve))
        yield* Effect.promise(() => s.devboxes.suspend(devbox))
        assert.strictEqual(devbox.status, "suspending")
        const creates = createCount(s)
        const since = Date.now()
        const second = yield* Effect.forkChild(buildRuntime(runloopLayer(s, { sessionId: "rl-transit" })))
        const waited = yield* waitedOnOrMade(s, devbox, since, creates)
        letGo()
        const { rt, release } = yield* Fiber.join(second)
        assert.isTrue(waited)
        assert.strictEqual(createCount(s), creates)
        assert.strictEqual((yield* rt.runCommand("cat /workspace/transit.txt")).content, "before")
        yield* release
        assert.strictEqual(devbox.status, "shutdown")
      }),
    180_000
  )

  it.live(
    "a session's devbox caught resuming is waited for, and its server (gone with the suspend) started again",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const keep = new SandboxConfig({ keepRuntimeAlive: true })
        const first = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-resuming", sandbox: keep }))
        yield* first.rt.runCommand("echo kept > /workspace/resuming.txt")
        yield* first.rt.pause
        yield* first.release
        const devbox = devboxOf(s, "rl-resuming")
        assert.strictEqual(devbox.status, "suspended")
        let letGo!: () => void
        s.devboxes.holdTransitions(new Promise<void>((resolve) => letGo = resolve))
        yield* Effect.promise(() => s.devboxes.resume(devbox))
        assert.strictEqual(devbox.status, "resuming")
        const creates = createCount(s)
        const since = Date.now()
        const second = yield* Effect.forkChild(buildRuntime(runloopLayer(s, { sessionId: "rl-resuming" })))
        yield* waitedOnOrMade(s, devbox, since, creates)
        letGo()
        const { rt, release } = yield* Fiber.join(second)
        assert.strictEqual(createCount(s), creates)
        assert.strictEqual((yield* rt.runCommand("cat /workspace/resuming.txt")).content, "kept")
        yield* release
        assert.strictEqual(devbox.status, "shutdown")
      }),
    180_000
  )

  it.live(
    "the reaper shuts down a dead owner's devboxes, running or suspended, and nothing else",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const dead = deadPid()
        const orphan = yield* devboxWith(s, owner(dead))
        const suspendedOrphan = yield* devboxWith(s, owner(dead))
        yield* Effect.promise(() => s.devboxes.suspend(suspendedOrphan))
        yield* Effect.promise(() =>
          s.devboxes.waitFor(() => suspendedOrphan.status === "suspended" || undefined, 30_000)
        )
        const kept = yield* devboxWith(s, owner(dead, { "effect-sandbox.keep-alive": "true" }))
        const elsewhere = yield* devboxWith(s, owner(dead, { "effect-sandbox.owner.host": "another-host" }))
        const stranger = yield* devboxWith(s, { "effect-sandbox.owner.pid": dead })
        const { release } = yield* buildRuntime(runloopLayer(s, { sessionId: "rl-reaper" }))
        yield* Effect.sync(() => [orphan.status, suspendedOrphan.status]).pipe(
          Effect.repeat({
            schedule: Schedule.spaced("100 millis"),
            until: (states) => states.every((state) => state === "shutdown"),
            times: 100
          })
        )
        assert.deepStrictEqual([orphan.status, suspendedOrphan.status], ["shutdown", "shutdown"])
        assert.deepStrictEqual([kept.status, elsewhere.status, stranger.status], ["running", "running", "running"])
        assert.strictEqual(devboxOf(s, "rl-reaper").status, "running")
        yield* release
        yield* Effect.forEach([kept, elsewhere, stranger], (d) => Effect.promise(() => s.devboxes.shutdown(d)))
      }),
    180_000
  )
})
