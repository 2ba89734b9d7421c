/**
 * ModalRuntime's snapshots through the real `modal` SDK against the stand-in: the SDK asks the
 * control plane for the sandbox's command router and takes the filesystem snapshot there (a commit
 * of the container), and the driver publishes the image under a name carrying the owner tags
 * (src/providers/modal/snapshotRef.ts). A kept snapshot never expires and outlives its runtime, is
 * listed, starts a sandbox with the files, and is removed (image and name); one not kept lives the
 * sandbox's `lifetime` at most and goes with its runtime; a dead owner's is reaped by its name; a
 * sandbox that ended is not snapshotted, another provider's snapshot and a removed one start
 * nothing, each as a typed error. One source runtime serves the cases; the conformance suite has
 * forks diverging.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { spawnSync } from "node:child_process"
import { createHash, randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { snapshotTags, TAGS } from "../../../src/hosted/ownerTags.ts"
import { makeProviderCall } from "../../../src/hosted/providerCall.ts"
import { reapOrphans } from "../../../src/hosted/reaper.ts"
import { ModalRuntime, type ModalRuntimeOptions } from "../../../src/modal.ts"
import { classifyModal } from "../../../src/providers/modal/classify.ts"
import { modalDriver } from "../../../src/providers/modal/driver.ts"
import { parseSnapshotRef, snapshotRef } from "../../../src/providers/modal/snapshotRef.ts"
import { InvalidOptionsError, RuntimeStartError } from "../../../src/schema/errors.ts"
import { RuntimeSnapshotError } from "../../../src/schema/snapshot.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { standinOptions, useModalStandin } from "./fixture.ts"
import type { Standin } from "./server.ts"

/** The `ttl_seconds` of the router's snapshot requests, in order. */
const ttls = (s: Standin) =>
  s.calls.filter((c) => c.method === "TaskSnapshotFilesystem").map((c) => c.request["ttlSeconds"])

/** The published names of our snapshots, each with the image it names. */
const names = (s: Standin) =>
  [...s.images.names].filter(([tag]) => tag.startsWith("es-snap-")).map(([tag, named]) => [tag, named.imageId])

describeDocker("ModalRuntime snapshots (stand-in)", () => {
  const standin = useModalStandin()
  const options = (more: ModalRuntimeOptions = {}) => standinOptions(standin(), more)
  const ids = Effect.suspend(() => ModalRuntime.listSnapshots(options())).pipe(
    Effect.map((all) => all.map((x) => x.id).sort())
  )

  it.live(
    "a kept snapshot is listed, starts a sandbox with the files, is removed; one not kept goes with its runtime; a dead owner's is reaped",
    () =>
      Effect.gen(function*() {
        const s = standin()
        const source = yield* buildRuntime(ModalRuntime.layer(options({ lifetime: "10 minutes" })))
        const session = source.rt.info.id
        assert.isTrue(source.rt.info.capabilities.snapshot)
        yield* source.rt.write({ path: `${source.rt.info.workspace}/notes.txt`, content: "in the filesystem" })

        // Kept: no expiry, named with the owner tags (this host's digest, this pid, the session as it is).
        const kept = yield* source.rt.snapshot({ keep: true })
        assert.deepInclude(kept, { provider: "Modal", keeps: "files", kept: true, sessionId: session })
        assert.match(kept.id, /^im-/)
        // Not kept: it lives no longer than the sandbox could (its `lifetime`).
        const dropped = yield* source.rt.snapshot()
        assert.deepStrictEqual(ttls(s), [-1, 600])
        const [keptName] = names(s).find(([, id]) => id === kept.id)!
        assert.match(keptName!, new RegExp(`^es-snap-[0-9a-f]{16}-${process.pid}-[0-9a-f]{8}:kept-s-${session}$`))
        assert.deepStrictEqual(yield* ids, [kept.id, dropped.id].sort())

        // A dead owner's snapshot (of this host) is reaped by its name; the living owner's stay.
        const box = [...s.sandboxes.values()].find((x) => x.tags[TAGS.session] === session)!
        const orphan = yield* Effect.promise(() => s.images.snapshot(box.container, randomUUID(), -1))
        s.images.publish(
          snapshotRef({ ...snapshotTags({ sessionId: "dead-owner", keep: false }), [TAGS.ownerPid]: deadPid() }),
          orphan
        )
        const call = makeProviderCall("Modal", classifyModal, Schedule.recurs(0))
        const reaped = yield* Effect.scoped(
          Effect.flatMap(modalDriver.connect(options(), call), (driver) => reapOrphans("Modal", driver))
        )
        assert.deepStrictEqual(reaped, [orphan])
        assert.isUndefined(s.images.engineImage(orphan))
        assert.deepStrictEqual(yield* ids, [kept.id, dropped.id].sort())

        // Ended under its runtime (its idle timeout): Modal's router snapshots only a running sandbox.
        yield* Effect.promise(() => s.end(box.id, "idle-timeout"))
        const ended = yield* Effect.flip(source.rt.snapshot())
        assert.instanceOf(ended, RuntimeSnapshotError)
        assert.strictEqual(ended.provider?.reason, "invalid")
        assert.include(ended.message, `Task ${box.taskId} is not running`)
        yield* source.release
        assert.deepStrictEqual(yield* ids, [kept.id])
        assert.isUndefined(s.images.engineImage(dropped.id))

        // Started from it: the files are there, the sandbox its own, made from the snapshot's image.
        const started = yield* buildRuntime(ModalRuntime.layer(options({ fromSnapshot: kept })))
        const copy = [...s.sandboxes.values()].find((x) => x.tags[TAGS.session] === started.rt.info.id)!
        assert.strictEqual(copy.definition.imageId, kept.id)
        assert.strictEqual((yield* started.rt.runCommand("cat notes.txt")).content, "in the filesystem")
        yield* started.release

        // Another provider's snapshot is refused before anything is made.
        const foreign = yield* Effect.flip(buildRuntime(ModalRuntime.layer(options({
          fromSnapshot: { ...kept, provider: "E2B" }
        }))))
        assert.instanceOf(foreign, InvalidOptionsError)
        assert.include(foreign.message, `the snapshot ${kept.id} was taken on E2B, not Modal`)

        // Removed: the image and its name; a sandbox from it is refused, saying so.
        yield* ModalRuntime.removeSnapshot(kept, options())
        assert.deepStrictEqual(yield* ids, [])
        assert.deepStrictEqual(names(s), [])
        assert.deepStrictEqual(s.images.snapshotIds(), [])
        const refused = yield* Effect.flip(buildRuntime(ModalRuntime.layer(options({ fromSnapshot: kept.id }))))
        assert.instanceOf(refused, RuntimeStartError)
        assert.include(refused.message, `Image ${kept.id} not found`)
      }),
    180_000
  )

  it("a name carries the owner tags in Modal's object-name rule, whatever the session id", () => {
    const long = "é".repeat(40)
    const uuid = randomUUID()
    for (
      const [sessionId, listed] of [
        [uuid, uuid],
        ["a session/with spaces", "a session/with spaces"],
        // 80 bytes: too long for the tag even in base64url, so only its digest is carried.
        [long, `sha256:${createHash("sha256").update(long).digest("hex").slice(0, 56)}`]
      ]
    ) {
      const tags = snapshotTags({ sessionId: sessionId!, keep: true })
      const ref = snapshotRef(tags)
      const [name = "", tag = ""] = ref.split(":")
      for (const part of [name, tag]) assert.match(part, /^[A-Za-z0-9._-]{1,64}$/)
      assert.deepStrictEqual(parseSnapshotRef(`main/${ref}`, hostname()), { ...tags, [TAGS.session]: listed! })
    }
    assert.match(
      parseSnapshotRef(snapshotRef(snapshotTags({ sessionId: "x", keep: false })), "another")![
        TAGS.ownerHost
      ]!,
      /^sha256:[0-9a-f]{16}$/
    )
    assert.isUndefined(parseSnapshotRef("effect-sandbox-runtime:latest", hostname()))
  })
})

/** A pid no process has: a child's that has exited. */
const deadPid = () => String(spawnSync("true").pid)
