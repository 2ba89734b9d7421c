/**
 * The lease a DockerRuntime holds over its containers (the format and the
 * reading side are in src/server/ownerLease.ts): a directory of its own in the
 * temp dir with `lease.json`, renewed (touched) every `renewEvery` while the
 * runtime's scope lives and removed when it closes. Containers mount the
 * directory read-only at LEASE_MOUNT and stop themselves when it goes stale;
 * the reaper removes containers whose lease it reads as stale. Nothing here
 * depends on pids or namespaces: only on the file and the kernel's clock.
 *
 * The lease directory also records, before each create, the container the owner
 * makes under it and the temporary workspace it made for it (`recordContainer`).
 * A container's labels say which lease and workspace it claims, and any image or
 * stranger can write labels; only the owner writes here (the containers see the
 * directory read-only), so the reaper acts on a claim only when it finds its record.
 */
import { Duration, Effect, Schedule } from "effect"
import { createHash } from "node:crypto"
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { RuntimeStartError } from "../../schema/errors.ts"
import { LEASE_FILE, type LeaseTerms } from "../../server/ownerLease.ts"
import { leaseWatchdog } from "./leaseWatchdog.ts"

/** Where containers see their owner's lease directory, and the lease in it (the server's `--owner-lease`). */
export const LEASE_MOUNT = "/run/effect-sandbox/owner"
export const LEASE_IN_CONTAINER = `${LEASE_MOUNT}/${LEASE_FILE}`

/** Lease directories are `<tmpdir>/effect-sandbox-lease-*`: the reaper sweeps stale ones. */
export const LEASE_DIR_PREFIX = "effect-sandbox-lease-"

export interface OwnerLeaseOptions {
  /** How often the owner renews its lease (default 2 s). */
  readonly renewEvery?: Duration.Input
  /**
   * How long without renewal proves the owner gone (default 20 s): an orphan
   * stops itself this long after its owner dies. Long enough to ride out a
   * busy event loop.
   */
  readonly staleAfter?: Duration.Input
  /** How often a live runtime's reaper looks for orphans (default 30 s). */
  readonly reapEvery?: Duration.Input
}

export interface OwnerLease {
  /** The lease directory on the host, mounted at LEASE_MOUNT. */
  readonly dir: string
}

/**
 * A lease directory this process may act on: one of ours by name and place (`<tmpdir>/effect-sandbox-lease-*`,
 * a real directory, not a link) and owned by our own user, so that a reaper running as root never
 * acts on a directory another user made (nor on one a sandbox planted in its workspace).
 */
export const isOwnLeaseDir = (dir: string): boolean => {
  if (dirname(dir) !== tmpdir() || !basename(dir).startsWith(LEASE_DIR_PREFIX)) return false
  try {
    const stat = lstatSync(dir)
    return stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid())
  } catch {
    return false
  }
}

/**
 * The record's file name: a digest of the container's name and its temporary workspace (empty
 * for none), so that the containers, which see the directory, learn neither from it.
 */
const recordFile = (dir: string, container: string, workspace: string | undefined) =>
  join(dir, `container-${createHash("sha256").update(`${container}\0${workspace ?? ""}`).digest("hex")}`)

/** Record, before creating it, a container made under the lease in `dir` and its temporary workspace. */
export const recordContainer = (dir: string, container: string, workspace: string | undefined) =>
  Effect.try({
    try: () => writeFileSync(recordFile(dir, container, workspace), "", { mode: 0o644 }),
    catch: (error) =>
      new RuntimeStartError({ message: `Cannot record ${container} in the owner's lease ${dir}: ${String(error)}` })
  })

/** The owner recorded this container under the lease in `dir`, with exactly this temporary workspace. */
export const isRecorded = (dir: string, container: string, workspace: string | undefined): boolean => {
  try {
    return lstatSync(recordFile(dir, container, workspace)).isFile()
  } catch {
    return false
  }
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
