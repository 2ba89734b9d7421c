/**
 * The owner's lease: how a sandbox knows that the process owning it is still
 * alive, without guessing from pids (a pid means nothing across PID namespaces).
 *
 * The owner keeps one file, `lease.json`, holding its terms (how often it renews,
 * when the lease counts as stale), and renews it by touching it: the heartbeat
 * is the file's mtime. Whoever can read the file can prove the owner is gone (no
 * renewal for `staleAfterMs`); whoever cannot read it knows nothing and must
 * not act. Docker bind-mounts the owner's lease directory read-only into its
 * containers, whose server (`--owner-lease FILE`) stops itself when the lease
 * goes stale; the reaper reads the same file from the host.
 */
import { Effect, Schema } from "effect"
import { readFileSync, statSync } from "node:fs"

/** The lease file's name inside the owner's lease directory. */
export const LEASE_FILE = "lease.json"

/** What the owner promises: a renewal every `renewEveryMs`; stale after `staleAfterMs` without one. */
export const LeaseTerms = Schema.Struct({ renewEveryMs: Schema.Number, staleAfterMs: Schema.Number })
export type LeaseTerms = typeof LeaseTerms.Type

/** A lease as read: its terms and its last renewal (the file's mtime, epoch ms). */
export interface Lease extends LeaseTerms {
  readonly renewedAt: number
}

const decodeTerms = Schema.decodeUnknownSync(Schema.fromJsonString(LeaseTerms))

/** The lease in `file`, or null when it cannot be read (missing, not a regular file, not our format). */
export const readLease = (file: string): Lease | null => {
  try {
    const stat = statSync(file)
    if (!stat.isFile()) return null
    return { ...decodeTerms(readFileSync(file, "utf8")), renewedAt: stat.mtimeMs }
  } catch {
    return null
  }
}

/** True when a readable lease was not renewed within its terms (wall clock: for one-off checks). */
export const isStale = (lease: Lease, now = Date.now()): boolean => now - lease.renewedAt > lease.staleAfterMs

/**
 * Completes once the owner's lease is lost: it was readable and then went
 * unrenewed for its `staleAfterMs`, or disappeared (the owner removes it when it
 * releases). A lease never seen (an engine that cannot mount the owner's file)
 * is never lost: no proof, no action. Staleness is measured on this process's
 * monotonic clock, so a suspended machine or a skewed wall clock cannot make a
 * live owner look dead.
 */
export const watchOwnerLease = Effect.fn("watchOwnerLease")(function*(file: string) {
  let seen: { readonly renewedAt: number; readonly changedAt: number; readonly staleAfterMs: number } | null = null
  while (true) {
    const lease = readLease(file)
    const now = performance.now()
    if (lease !== null) {
      if (seen === null || seen.renewedAt !== lease.renewedAt) {
        seen = { renewedAt: lease.renewedAt, changedAt: now, staleAfterMs: lease.staleAfterMs }
      }
      if (now - seen.changedAt > seen.staleAfterMs) {
        return yield* Effect.logWarning(`the owner's lease ${file} went stale: stopping`)
      }
    } else if (seen !== null) {
      return yield* Effect.logWarning(`the owner's lease ${file} is gone: stopping`)
    }
    yield* Effect.sleep(Math.min(1_000, Math.max(50, (seen?.staleAfterMs ?? 4_000) / 4)))
  }
})
