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
 * goes stale; the reaper reads the same file from the host (leaseFile.ts reads it).
 */
import { Effect } from "effect"
import { readLease } from "./leaseFile.ts"

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
