/**
 * RunloopRuntime's snapshots through the SDK against the stand-in: Runloop's disk snapshots, which
 * only a running devbox has (a paused runtime's snapshot is Runloop's 400, as a
 * RuntimeSnapshotError); a kept one outlives its runtime, is listed, starts a devbox by
 * `snapshot_id` (instead of the blueprint) with the files, and ends with `removeSnapshot`. The
 * conformance suite has forks diverging.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { RunloopRuntime } from "../../../src/runloop.ts"
import { RuntimeSnapshotError } from "../../../src/schema/snapshot.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { runloopLayer, standInOptions, useStandIn } from "./fixture.ts"
import type { RunloopStandIn } from "./server.ts"

/** Runloop's rules on a paused devbox, then a kept snapshot's life: listed, started from, deleted. */
const pausedThenKept = (s: RunloopStandIn) =>
  Effect.gen(function*() {
    const source = yield* buildRuntime(runloopLayer(s))
    yield* source.rt.write({ path: `${source.rt.info.workspace}/notes.txt`, content: "on the disk" })
    yield* source.rt.pause
    const refused = yield* Effect.flip(source.rt.snapshot())
    assert.instanceOf(refused, RuntimeSnapshotError)
    assert.strictEqual(refused.provider?.status, 400)
    assert.include(refused.message, "only a running devbox's disk can be snapshotted")
    yield* source.rt.resume
    const kept = yield* source.rt.snapshot({ keep: true })
    assert.deepInclude(kept, { provider: "Runloop", keeps: "files", kept: true, sessionId: source.rt.info.id })
    yield* source.release
    const options = standInOptions(s)
    assert.include((yield* RunloopRuntime.listSnapshots(options)).map((snapshot) => snapshot.id), kept.id)

    const started = yield* buildRuntime(runloopLayer(s, { fromSnapshot: kept }))
    const create = s.requests.filter((r) => r.method === "POST" && r.path === "/v1/devboxes").at(-1)!
      .body as Record<string, unknown>
    assert.strictEqual(create["snapshot_id"], kept.id)
    assert.isUndefined(create["blueprint_name"])
    assert.strictEqual((yield* started.rt.runCommand("cat notes.txt")).content, "on the disk")
    yield* started.release
    yield* RunloopRuntime.removeSnapshot(kept, options)
    assert.notInclude((yield* RunloopRuntime.listSnapshots(options)).map((snapshot) => snapshot.id), kept.id)
  })

describeDocker("RunloopRuntime snapshots (stand-in)", () => {
  const standIn = useStandIn()
  it.live(
    "a paused devbox is refused; a kept snapshot is listed, starts a devbox with its files, and is deleted",
    () => pausedThenKept(standIn()),
    120_000
  )
})
