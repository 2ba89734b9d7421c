/**
 * The lease a DockerRuntime holds over its containers (the format and the
 * reading side are in src/server/ownerLease.ts): a directory of its own in the
 * temp dir with `lease.json`, renewed (touched) every `renewEvery` while the
 * runtime's scope lives and removed when it closes. Containers mount the
 * directory read-only at LEASE_MOUNT and stop themselves when it goes stale;
 * the reaper removes containers whose lease it reads as stale. Nothing here
 * depends on pids or namespaces: only on the file and the kernel's clock.
 * The directory also holds the owner's records of its containers (leaseRecords.ts).
 */
import { Duration, Effect, Schedule } from "effect"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LEASE_FILE, type LeaseTerms } from "../../server/leaseFile.ts"
import { LEASE_DIR_PREFIX } from "./leaseDir.ts"
import { leaseWatchdog } from "./leaseWatchdog.ts"

/** Where containers see their owner's lease directory, and the lease in it (the server's `--owner-lease`). */
export const LEASE_MOUNT = "/run/effect-sandbox/owner"
export const LEASE_IN_CONTAINER = `${LEASE_MOUNT}/${LEASE_FILE}`

export interface OwnerLeaseOptions {
  /** How often the owner renews its lease (default 2 s). */
  readonly renewEvery?: Duration.Input
  /**
   * How long without renewal proves the owner gone (default 20 s): an orphan
   * stops itself this long after its owner dies. Long enough to ride out a
   * busy event loop.
   */
  readonly staleAfter?: Duration.Input
}

export interface OwnerLease {
  /** The lease directory on the host, mounted at LEASE_MOUNT. */
  readonly dir: string
}

/** Write the lease afresh: a new file's mtime is its first renewal. */
const writeLease = (dir: string, terms: LeaseTerms) => {
  mkdirSync(dir, { recursive: true })
  // The container's user (any uid) must read it; it holds no secret.
  chmodSync(dir, 0o755)
  writeFileSync(join(dir, LEASE_FILE), JSON.stringify(terms), { mode: 0o644 })
}

/**
 * Renew: touch the file, or write it again if it is gone (a reaper may sweep the
 * lease of an owner whose event loop stalled past `staleAfter`; its containers
 * that survived see it renewed again).
 */
const renew = (dir: string, terms: LeaseTerms) =>
  Effect.try(() => {
    const now = new Date()
    try {
      utimesSync(join(dir, LEASE_FILE), now, now)
    } catch {
      writeLease(dir, terms)
    }
  })

/** Write the lease and keep it renewed while the scope lives; removed with the scope. */
export const acquireOwnerLease = Effect.fn("acquireOwnerLease")(function*(options: OwnerLeaseOptions = {}) {
  const terms: LeaseTerms = {
    renewEveryMs: Duration.toMillis(options.renewEvery ?? "2 seconds"),
    staleAfterMs: Duration.toMillis(options.staleAfter ?? "20 seconds")
  }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const made = mkdtempSync(join(tmpdir(), LEASE_DIR_PREFIX))
      writeLease(made, terms)
      return made
    }),
    (made) => Effect.sync(() => rmSync(made, { recursive: true, force: true }))
  )
  // Removes the orphans of this lease if we die without releasing it.
  yield* leaseWatchdog(dir)
  // A failed renewal is retried at the next beat; until one succeeds the lease goes stale.
  yield* renew(dir, terms).pipe(Effect.ignore, Effect.repeat(Schedule.spaced(terms.renewEveryMs)), Effect.forkScoped)
  return { dir } satisfies OwnerLease
})
