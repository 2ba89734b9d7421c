/**
 * Snapshots in the generic hosted runtime (src/hosted/snapshots.ts, reaper.ts) against an in-memory
 * driver, once for every provider: a snapshot carries the owner tags but never the session key,
 * goes with its runtime unless kept, is refused at once where the driver says why, is reaped by the
 * pid rule once its owner is gone (unless kept); `fromSnapshot` reaches `create`, and is refused on
 * a provider without snapshots or for another provider's snapshot.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { TAGS } from "../../src/hosted/ownerTags.ts"
import { provisionHosted } from "../../src/hosted/provisioner.ts"
import { reapOrphans } from "../../src/hosted/reaper.ts"
import { startingSnapshot } from "../../src/hosted/snapshots.ts"
import { InvalidOptionsError } from "../../src/schema/errors.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import { RuntimeSnapshotError } from "../../src/schema/snapshot.ts"
import type { Driver, FoundSnapshot } from "../../src/services/Driver.ts"

/** A provider of one kind of sandbox (its id) whose snapshots live in `snapshots`; `refuse` makes it decline them. */
const snapshotProvider = (refuse?: string) => {
  const snapshots = new Map<string, FoundSnapshot>()
  const created: Array<string | undefined> = []
  let next = 0
  const driver: Driver<string> = {
    user: { name: "user", id: 1000 },
    create: (spec) =>
      Effect.sync(() => {
        created.push(spec.fromSnapshot)
        return { sandbox: `box-${++next}`, id: `box-${next}` }
      }),
    launch: () => Effect.succeed({ workspace: "/workspace" }),
    destroy: () => Effect.void,
    find: () => Effect.succeed([]),
    endpoint: (box, port) => Effect.succeed({ url: `http://${box}:${port}` }),
    snapshot: {
      keeps: "files",
      ...(refuse === undefined ? {} : { refusal: () => refuse }),
      take: (box, tags) =>
        Effect.sync(() => {
          const found = { id: `snap-of-${box}-${snapshots.size}`, tags, createdAt: new Date(0) }
          snapshots.set(found.id, found)
          return found
        }),
      remove: (id) => Effect.sync(() => void snapshots.delete(id)),
      find: (tags) =>
        Effect.sync(() =>
          [...snapshots.values()].filter((found) => Object.entries(tags).every(([k, v]) => found.tags[k] === v))
        )
    }
  }
  return { driver, snapshots, created }
}

const contextOf = (driver: Driver<string>, fromSnapshot?: string) => ({
  provider: "Fake",
  noun: "sandbox",
  kind: "fake",
  driver,
  options: {},
  sandbox: new SandboxConfig({}),
  attachOnly: false,
  fromSnapshot
})

describe("snapshots in the hosted runtime", () => {
  it.effect("a snapshot has the owner tags, not the session key, and goes with its runtime unless kept", () =>
    Effect.gen(function*() {
      const { driver, snapshots } = snapshotProvider()
      const scope = yield* Scope.make()
      const box = yield* provisionHosted(contextOf(driver), () => Effect.void).pipe(Scope.provide(scope))
      assert.isTrue(box.capabilities.snapshot)
      const passing = yield* box.snapshot!({})
      const kept = yield* box.snapshot!({ keep: true })
      assert.deepStrictEqual(passing, {
        id: "snap-of-box-1-0",
        provider: "Fake",
        keeps: "files",
        sessionId: box.id,
        createdAt: "1970-01-01T00:00:00.000Z",
        kept: false
      })
      assert.isTrue(kept.kept)
      const tags = snapshots.get(passing.id)!.tags
      assert.strictEqual(tags[TAGS.snapshot], "true")
      assert.strictEqual(tags[TAGS.ownerPid], String(process.pid))
      assert.strictEqual(tags[TAGS.ownerHost], hostname())
      assert.isUndefined(tags[TAGS.sessionKey])
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual([...snapshots.keys()], [kept.id])
    }))

  it.effect("a sandbox the driver will not snapshot says so in its capabilities and fails at once", () =>
    Effect.gen(function*() {
      const { driver, snapshots } = snapshotProvider("Fake snapshots only sandboxes of class linux-vm.")
      const box = yield* Effect.scoped(provisionHosted(contextOf(driver), () => Effect.void))
      assert.isFalse(box.capabilities.snapshot)
      const refused = yield* Effect.flip(box.snapshot!({}))
      assert.instanceOf(refused, RuntimeSnapshotError)
      assert.strictEqual(refused.message, "Fake snapshots only sandboxes of class linux-vm.")
      assert.strictEqual(snapshots.size, 0)
    }))

  it.effect("fromSnapshot reaches create; a provider without snapshots or another's snapshot is refused", () =>
    Effect.gen(function*() {
      const { created, driver } = snapshotProvider()
      yield* Effect.scoped(provisionHosted(contextOf(driver, "snap-1"), () => Effect.void))
      assert.deepStrictEqual(created, ["snap-1"])
      const handle = {
        id: "snap-2",
        provider: "Docker",
        keeps: "files" as const,
        sessionId: "s",
        createdAt: "1970-01-01T00:00:00.000Z",
        kept: false
      }
      const other = yield* Effect.flip(
        startingSnapshot("FakeRuntime", "Fake", driver.snapshot, { fromSnapshot: handle })
      )
      assert.instanceOf(other, InvalidOptionsError)
      assert.strictEqual(
        other.message,
        "FakeRuntime options: fromSnapshot: the snapshot snap-2 was taken on Docker, not Fake."
      )
      const none = yield* Effect.flip(startingSnapshot("FakeRuntime", "Fake", undefined, { fromSnapshot: "snap-2" }))
      assert.strictEqual(
        none.message,
        "FakeRuntime options: fromSnapshot: Fake keeps no snapshots (docs/snapshots.md)."
      )
      assert.strictEqual(
        yield* startingSnapshot("FakeRuntime", "Fake", driver.snapshot, {
          fromSnapshot: { ...handle, provider: "Fake" }
        }),
        "snap-2"
      )
    }))

  it.effect("the reaper removes a dead owner's snapshots of this host, and no one else's, nor kept ones", () =>
    Effect.gen(function*() {
      const { driver, snapshots } = snapshotProvider()
      const dead = String(spawnSync("true").pid)
      // Each snapshot's owner: host, pid, and whether it was kept.
      const owners = {
        orphan: [hostname(), dead, false],
        kept: [hostname(), dead, true],
        live: [hostname(), String(process.pid), false],
        elsewhere: [`not-${hostname()}`, dead, false]
      } as const
      for (const [id, [host, pid, keep]] of Object.entries(owners)) {
        snapshots.set(id, {
          id,
          createdAt: new Date(0),
          tags: {
            [TAGS.managed]: "true",
            [TAGS.snapshot]: "true",
            [TAGS.ownerHost]: host,
            [TAGS.ownerPid]: pid,
            [TAGS.keepAlive]: String(keep)
          }
        })
      }
      assert.deepStrictEqual(yield* reapOrphans("Fake", driver), ["orphan"])
      assert.deepStrictEqual([...snapshots.keys()].sort(), ["elsewhere", "kept", "live"])
    }))
})
