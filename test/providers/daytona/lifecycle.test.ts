/**
 * DaytonaRuntime's lifecycle through the SDK against the stand-in: pause/resume are Daytona's
 * pause and start (memory kept: the shell's variables and a background process survive), a kept-
 * alive sandbox is attached to again by its session id, and the reaper deletes the sandboxes whose
 * owner's heartbeat went stale while leaving a live owner's alone.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { SandboxConfig } from "../../../src/index.ts"
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
      // No heartbeat on a kept-alive sandbox: no reaper may take it for an orphan.
      assert.isUndefined(sandbox.labels["effect-sandbox.owner.renewed-at"])
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
    "the reaper deletes sandboxes whose owner's heartbeat is stale, not a live owner's",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const stale = new Date(Date.now() - 10 * 60_000).toISOString()
        const orphan = yield* Effect.promise(() =>
          s.sandboxes.create({
            snapshot: "effect-sandbox-runtime",
            labels: {
              "effect-sandbox.managed": "true",
              "effect-sandbox.session": "dtn-orphan",
              "effect-sandbox.owner.renewed-at": stale,
              "effect-sandbox.owner.stale-after-ms": "300000"
            }
          })
        )
        const stranger = yield* Effect.promise(() =>
          s.sandboxes.create({
            snapshot: "effect-sandbox-runtime",
            labels: { "effect-sandbox.owner.renewed-at": stale }
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
        // Not ours (no managed label): never touched, whatever its labels say.
        assert.strictEqual(stranger.state, "started")
        const live = [...s.sandboxes.byId.values()].find((x) => x.labels["effect-sandbox.session"] === "dtn-reaper")!
        assert.strictEqual(live.state, "started")
        yield* release
        yield* Effect.promise(() => s.sandboxes.destroy(stranger))
      }),
    120_000
  )
})
