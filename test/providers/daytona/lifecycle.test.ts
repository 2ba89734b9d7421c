/**
 * DaytonaRuntime's lifecycle through the SDK against the stand-in: pause/resume are Daytona's
 * pause and start (memory kept: the shell's variables and a background process survive), a kept-
 * alive sandbox is attached to again by its session id (a stopped one started and its server
 * launched again), the disconnect watch reports a sandbox Daytona stopped under its runtime, and
 * the reaper deletes the sandboxes of this host whose owner's process is gone while leaving a live
 * owner's, a kept-alive one and a stranger's alone.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { SandboxConfig } from "../../../src/index.ts"
import { expectDisconnected } from "../../disconnected.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { daytonaLayer, useStandIn } from "./infra.ts"

describeDocker("DaytonaRuntime lifecycle (stand-in)", () => {
  const standIn = useStandIn()

  it.live(
    "pause freezes the sandbox with its memory, resume thaws it: the shell and its jobs carry on",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-pause" }))
        const sandbox = [...s.sandboxes.byId.values()].find((x) => x.labels["effect-sandbox.session"] === "dtn-pause")!
        yield* rt.runCommand("export KEPT=through-pause; sleep 777 >/dev/null 2>&1 &")
        yield* rt.pause
        assert.strictEqual(sandbox.state, "paused")
        yield* rt.resume
        assert.strictEqual(sandbox.state, "started")
        const after = yield* rt.runCommand("echo $KEPT; pgrep -c -f 'sleep 777'")
        assert.strictEqual(after.content, "through-pause\n1")
        const lifecycle = s.requests.filter((r) =>
          r.path === `/sandbox/${sandbox.id}/pause` || r.path === `/sandbox/${sandbox.id}/start`
        )
        assert.deepStrictEqual(lifecycle.map((r) => r.path.split("/").at(-1)), ["pause", "start"])
        yield* release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live("a kept-alive sandbox outlives its runtime and is attached to by session id", () =>
    Effect.gen(function*() {
      const s = standIn()
      const keep = new SandboxConfig({ keepRuntimeAlive: true })
      const first = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-attach", sandbox: keep }))
      yield* first.rt.runCommand("echo kept > /workspace/note.txt")
      yield* first.release
      const sandbox = [...s.sandboxes.byId.values()].find((x) => x.labels["effect-sandbox.session"] === "dtn-attach")!
      assert.strictEqual(sandbox.state, "started")
      // Kept alive: no reaper may take it for an orphan once its owner is gone.
      assert.strictEqual(sandbox.labels["effect-sandbox.keep-alive"], "true")
      const creates = s.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").length
      const second = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-attach" }))
      assert.strictEqual(s.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").length, creates)
      assert.strictEqual((yield* second.rt.runCommand("cat /workspace/note.txt")).content, "kept")
      yield* second.release
      assert.strictEqual(sandbox.state, "destroyed")
    }), 120_000)

  it.live(
    "attaching to a sandbox Daytona stopped starts it and its server again; the disk kept the files",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const keep = new SandboxConfig({ keepRuntimeAlive: true })
        const first = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-stopped", sandbox: keep }))
        yield* first.rt.runCommand("echo on-disk > /workspace/kept.txt; export GONE=1")
        yield* first.release
        const sandbox = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-stopped"
        )!
        // What auto-stop does: the disk stays, the processes (our server with them) do not.
        yield* Effect.promise(() => s.sandboxes.stop(sandbox))
        const second = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-stopped" }))
        assert.strictEqual(sandbox.state, "started")
        const after = yield* second.rt.runCommand("cat /workspace/kept.txt; echo \"[$GONE]\"")
        assert.strictEqual(after.content, "on-disk\n[]")
        yield* second.release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live(
    "a sandbox Daytona stopped under its runtime shows as a disconnect naming it, and is deleted on release",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-watched" }))
        const sandbox = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-watched"
        )!
        yield* Effect.promise(() => s.sandboxes.stop(sandbox))
        // The watch looks every 5 s.
        yield* expectDisconnected(rt, `Daytona stopped sandbox ${sandbox.id} (auto-stop, or stopped from outside)`)
        yield* release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    120_000
  )

  it.live(
    "the reaper deletes this host's sandboxes whose owner is gone, not a live owner's, a kept-alive one or a stranger's",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        // A pid that was ours to see die: a finished child's.
        const dead = String(spawnSync("true").pid)
        const owned = (session: string, keepAlive: boolean) =>
          Effect.promise(() =>
            s.sandboxes.create({
              snapshot: "effect-sandbox-runtime",
              labels: {
                "effect-sandbox.managed": "true",
                "effect-sandbox.session": session,
                "effect-sandbox.owner.host": hostname(),
                "effect-sandbox.owner.pid": dead,
                "effect-sandbox.keep-alive": String(keepAlive)
              }
            })
          )
        const orphan = yield* owned("dtn-orphan", false)
        const kept = yield* owned("dtn-kept", true)
        const stranger = yield* Effect.promise(() =>
          s.sandboxes.create({
            snapshot: "effect-sandbox-runtime",
            labels: { "effect-sandbox.owner.host": hostname(), "effect-sandbox.owner.pid": dead }
          })
        )
        const { release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-reaper" }))
        yield* Effect.sync(() => orphan.state).pipe(
          Effect.repeat({
            schedule: Schedule.spaced("100 millis"),
            until: (state) => state === "destroyed",
            times: 100
          })
        )
        assert.strictEqual(orphan.state, "destroyed")
        assert.strictEqual(kept.state, "started")
        // Not ours (no managed label): never touched, whatever its labels say.
        assert.strictEqual(stranger.state, "started")
        const live = [...s.sandboxes.byId.values()].find((x) => x.labels["effect-sandbox.session"] === "dtn-reaper")!
        assert.strictEqual(live.state, "started")
        yield* release
        yield* Effect.promise(() => s.sandboxes.destroy(stranger))
        yield* Effect.promise(() => s.sandboxes.destroy(kept))
      }),
    120_000
  )
})
