/**
 * The server's side of the owner's lease (`--owner-lease`): it stops only on
 * proof, a lease it read that then went unrenewed or disappeared; a lease it
 * never saw keeps it running. No engine needed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LEASE_FILE } from "../../src/server/leaseFile.ts"
import { watchOwnerLease } from "../../src/server/ownerLease.ts"

/** A lease file with short terms (renew 50 ms, stale after 400 ms) in a fresh directory. */
const makeLease = () => {
  const dir = mkdtempSync(join(tmpdir(), "lease-test-"))
  const file = join(dir, LEASE_FILE)
  writeFileSync(file, JSON.stringify({ renewEveryMs: 50, staleAfterMs: 400 }))
  return { dir, file }
}

const touch = (file: string) => Effect.sync(() => utimesSync(file, new Date(), new Date()))

describe("watchOwnerLease", () => {
  it.live("keeps running while the lease is renewed, and stops once it is not", () =>
    Effect.gen(function*() {
      const { dir, file } = makeLease()
      const watch = yield* Effect.forkChild(watchOwnerLease(file))
      for (let beat = 0; beat < 20; beat++) {
        yield* touch(file)
        yield* Effect.sleep("50 millis")
      }
      assert.isUndefined(watch.pollUnsafe(), "stopped while the lease was renewed")
      const stoppedAt = Date.now()
      yield* Fiber.join(watch).pipe(Effect.timeout("2 seconds"))
      assert.isAtLeast(Date.now() - stoppedAt, 300)
      rmSync(dir, { recursive: true, force: true })
    }))

  it.live("stops when a lease it saw disappears (the owner released it)", () =>
    Effect.gen(function*() {
      const { dir, file } = makeLease()
      const watch = yield* Effect.forkChild(watchOwnerLease(file))
      yield* Effect.sleep("150 millis")
      rmSync(dir, { recursive: true, force: true })
      yield* Fiber.join(watch).pipe(Effect.timeout("1 second"))
    }))

  it.live("never stops on a lease it could not read: no proof, no action", () =>
    Effect.gen(function*() {
      const watch = yield* Effect.forkChild(watchOwnerLease(join(tmpdir(), "no-such-lease", LEASE_FILE)))
      yield* Effect.sleep("1500 millis")
      assert.isUndefined(watch.pollUnsafe())
      yield* Fiber.interrupt(watch)
    }))
})
