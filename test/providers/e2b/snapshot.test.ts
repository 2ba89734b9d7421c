/**
 * E2BRuntime's snapshots through the SDK against the stand-in: E2B's snapshot is a template of the
 * running sandbox with its memory, so a sandbox made from one runs the source's processes (the
 * stand-in runs them again, standing for the restored memory); the driver reboots such a copy
 * without memory before its own server starts, so nothing of the source runs in it (its server
 * with the source's key above all) and the copy answers to its own key. A kept snapshot outlives
 * its runtime, is listed by the tags its name carries, starts a sandbox with its files, and is
 * deleted; a dead owner's is reaped. The conformance suite has forks diverging.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { E2BRuntime } from "../../../src/e2b.ts"
import { TAGS } from "../../../src/hosted/ownerTags.ts"
import { makeProviderCall } from "../../../src/hosted/providerCall.ts"
import { reapOrphans } from "../../../src/hosted/reaper.ts"
import { classifyE2B } from "../../../src/providers/e2b/classify.ts"
import { e2bDriver } from "../../../src/providers/e2b/driver.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { orphanSnapshotName } from "../orphanSnapshot.ts"
import { standinOptions, suiteStandin } from "./fixture.ts"
import type { Standin } from "./server.ts"

const ids = (s: Standin) => Effect.map(E2BRuntime.listSnapshots(standinOptions(s)), (all) => all.map((x) => x.id))

/** How many processes of the sandbox run `sleep 987` (read from /proc: the image has no procps). */
const SLEEPERS =
  "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null | grep -c '^sleep 98[7] $'"

/**
 * {@link SLEEPERS} once it reads 1, or after 10 s: a background job is forked, and becomes `sleep
 * 987` by its exec, a moment after the command that started it has returned.
 */
const SLEEPER_STARTED = `for i in $(seq 200); do n=$(${SLEEPERS}); [ "$n" = 1 ] && break; sleep 0.05; done; echo "$n"`

/** The requests the stand-in's API received, as `METHOD path`. */
const calls = (s: Standin, pattern: RegExp) => s.calls.filter((c) => pattern.test(`${c.method} ${c.path}`))

describeDocker("E2BRuntime snapshots (stand-in)", () => {
  const standin = suiteStandin()

  it.live(
    "a copy forgets the source's memory and answers to its own key; a kept snapshot is listed, starts, is deleted; a dead owner's is reaped",
    () =>
      Effect.gen(function*() {
        const s = standin()
        const source = yield* buildRuntime(E2BRuntime.layer(standinOptions(s)))
        assert.isTrue(source.rt.info.capabilities.snapshot)
        yield* source.rt.write({ path: `${source.rt.info.workspace}/notes.txt`, content: "on the disk" })
        // A process of the source's memory: it must not run in a copy.
        yield* source.rt.runCommand("(setsid sleep 987 > /dev/null 2>&1 &)")
        assert.strictEqual((yield* source.rt.runCommand(SLEEPER_STARTED)).content, "1")

        const kept = yield* source.rt.snapshot({ keep: true })
        assert.deepInclude(kept, { provider: "E2B", keeps: "files", kept: true, sessionId: source.rt.info.id })
        const taken = s.snapshots.byId.get(kept.id)!
        assert.isTrue(taken.memory.some((p) => p.args === "sleep 987"))
        assert.include(yield* ids(s), kept.id)

        // A dead owner's snapshot (of this host) is reaped; the living owner's stays.
        const orphan = orphanSnapshotName()
        const box = [...s.sandboxes.values()].find((x) => x.metadata[TAGS.session] === source.rt.info.id)!
        const orphanId = (yield* Effect.promise(() => s.snapshots.take(box, orphan))).snapshotID
        const call = makeProviderCall("E2B", classifyE2B, Schedule.recurs(0))
        const reaped = yield* Effect.scoped(
          Effect.flatMap(e2bDriver.connect(standinOptions(s), call), (driver) => reapOrphans("E2B", driver))
        )
        assert.deepStrictEqual(reaped, [orphanId])
        assert.deepStrictEqual(yield* ids(s), [kept.id])
        yield* source.release

        // Started from it: the source's processes ran again in the copy (its memory), and were ended
        // by a pause keeping no memory and a cold boot, before the copy's own server started.
        const started = yield* buildRuntime(E2BRuntime.layer(standinOptions(s, { fromSnapshot: kept })))
        const copy = s.sandboxes.get(findCopy(s, started.rt.info.id))!
        assert.include(copy.restored, "sleep 987")
        assert.deepStrictEqual(calls(s, new RegExp(`^POST /sandboxes/${copy.sandboxID}/pause$`)).map((c) => c.body), [
          { memory: false }
        ])
        assert.strictEqual((yield* started.rt.runCommand("cat notes.txt")).content, "on the disk")
        assert.strictEqual((yield* started.rt.runCommand(SLEEPERS)).content, "0")
        yield* started.release

        yield* E2BRuntime.removeSnapshot(kept, standinOptions(s))
        assert.deepStrictEqual(yield* ids(s), [])
        assert.strictEqual(s.snapshots.byId.size, 0)
      }),
    180_000
  )
})

/** The stand-in's id of the session's sandbox. */
const findCopy = (s: Standin, sessionId: string) =>
  [...s.sandboxes.values()].find((x) => x.metadata[TAGS.session] === sessionId)!.sandboxID
