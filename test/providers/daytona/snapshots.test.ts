/**
 * DaytonaRuntime's snapshots through the SDK against the stand-in, under Daytona's rules: only a
 * started or stopped sandbox is snapshotted (a paused runtime's snapshot is Daytona's 400, as a
 * RuntimeSnapshotError); a name taken while the runner commits leaves no snapshot, which the
 * driver says; a kept snapshot outlives its runtime, is listed, starts a sandbox with its files by
 * its name, and once deleted (`removing`) starts none (Daytona's 400 "Snapshot X is removing"); a
 * dead owner's snapshot is reaped. The conformance suite has forks diverging. One source runtime
 * serves the cases.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, Schedule } from "effect"
import { DaytonaRuntime } from "../../../src/daytona.ts"
import { TAGS } from "../../../src/hosted/ownerTags.ts"
import { makeProviderCall } from "../../../src/hosted/providerCall.ts"
import { reapOrphans } from "../../../src/hosted/reaper.ts"
import { classifyDaytona } from "../../../src/providers/daytona/classify.ts"
import { daytonaDriver } from "../../../src/providers/daytona/driver.ts"
import { RuntimeStartError } from "../../../src/schema/errors.ts"
import { RuntimeSnapshotError } from "../../../src/schema/snapshot.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { orphanSnapshotName } from "../orphanSnapshot.ts"
import { daytonaLayer, gate, until, useStandIn } from "./infra.ts"
import type { DaytonaStandIn } from "./server.ts"

const optionsOf = (s: DaytonaStandIn) => ({ apiKey: Redacted.make(s.apiKey), apiUrl: s.apiUrl })

/** The snapshot requests the stand-in received, their bodies. */
const snapshotRequests = (s: DaytonaStandIn) =>
  s.requests.filter((r) => r.method === "POST" && /^\/sandbox\/[^/]+\/snapshot$/.test(r.path)).map((r) =>
    r.body as { readonly name: string; readonly includeMemory?: boolean }
  )

const ids = (s: DaytonaStandIn) => Effect.map(DaytonaRuntime.listSnapshots(optionsOf(s)), (all) => all.map((x) => x.id))

describeDocker("DaytonaRuntime snapshots (stand-in)", () => {
  const standIn = useStandIn()

  it.live(
    "Daytona's rules; a kept snapshot is listed, starts a sandbox with its files, is deleted; a dead owner's is reaped",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const source = yield* buildRuntime(daytonaLayer(s))
        yield* source.rt.write({ path: `${source.rt.info.workspace}/notes.txt`, content: "in the filesystem" })
        assert.isTrue(source.rt.info.capabilities.snapshot)

        // Paused (its memory kept): Daytona snapshots only a started or stopped sandbox.
        yield* source.rt.pause
        const paused = yield* Effect.flip(source.rt.snapshot())
        assert.instanceOf(paused, RuntimeSnapshotError)
        assert.strictEqual(paused.provider?.status, 400)
        assert.include(paused.message, "Sandbox must be in started or stopped state to create a snapshot")
        yield* source.rt.resume

        // A name taken while the runner commits: Daytona inserts nothing and says nothing.
        const held = gate()
        s.sandboxes.hold = held.promise
        const before = snapshotRequests(s).length
        const taking = yield* Effect.forkChild(Effect.flip(source.rt.snapshot()))
        yield* until(() => snapshotRequests(s).length > before)
        const taken = s.sandboxes.snapshots.configure(snapshotRequests(s).at(-1)!.name, "busybox", "another-sandbox")
        s.sandboxes.hold = undefined
        held.open()
        const lost = yield* Fiber.join(taking)
        assert.instanceOf(lost, RuntimeSnapshotError)
        assert.strictEqual(lost.provider?.status, 409)
        assert.match(
          lost.message,
          /^Daytona made no snapshot \S+ of sandbox \S+: the name is a snapshot of sandbox another-sandbox$/
        )
        s.sandboxes.snapshots.byId.delete(taken.id)

        // Kept: it outlives the runtime, listed by the tags its name carries.
        const kept = yield* source.rt.snapshot({ keep: true })
        assert.deepInclude(kept, { provider: "Daytona", keeps: "files", kept: true, sessionId: source.rt.info.id })
        assert.deepStrictEqual(snapshotRequests(s).at(-1), { name: kept.id })
        const dropped = yield* source.rt.snapshot()
        assert.includeMembers(yield* ids(s), [kept.id, dropped.id])

        // A dead owner's snapshot (of this host) is reaped; the living owner's stays.
        const orphan = orphanSnapshotName()
        const sandbox = [...s.sandboxes.byId.values()].find((x) => x.labels[TAGS.session] === source.rt.info.id)!
        yield* Effect.promise(() => s.sandboxes.snapshots.commit(sandbox, orphan))
        const call = makeProviderCall("Daytona", classifyDaytona, Schedule.recurs(0))
        const reaped = yield* Effect.scoped(
          Effect.flatMap(daytonaDriver.connect(optionsOf(s), call), (driver) => reapOrphans("Daytona", driver))
        )
        assert.deepStrictEqual(reaped, [orphan])
        assert.notInclude(yield* ids(s), orphan)
        assert.include(yield* ids(s), dropped.id)

        yield* source.release
        const left = yield* ids(s)
        assert.include(left, kept.id)
        assert.notInclude(left, dropped.id)

        // Started from it by its name: the files are there, the sandbox its own.
        const started = yield* buildRuntime(daytonaLayer(s, { fromSnapshot: kept }))
        const create = s.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").at(-1)!
          .body as Record<string, unknown>
        assert.strictEqual(create["snapshot"], kept.id)
        assert.strictEqual((yield* started.rt.runCommand("cat notes.txt")).content, "in the filesystem")
        yield* started.release

        // Deleted: `removing` at once, and a sandbox from it is refused meanwhile.
        const removal = gate()
        s.sandboxes.hold = removal.promise
        yield* DaytonaRuntime.removeSnapshot(kept, optionsOf(s))
        const refused = yield* Effect.flip(buildRuntime(daytonaLayer(s, { fromSnapshot: kept.id })))
        assert.instanceOf(refused, RuntimeStartError)
        assert.include(refused.message, `Snapshot ${kept.id} is removing`)
        s.sandboxes.hold = undefined
        removal.open()
        yield* until(() => s.sandboxes.snapshots.taken().length === 0)
        assert.deepStrictEqual(yield* ids(s), [])
      }),
    180_000
  )
})
