/**
 * The owner's lease file as read from disk (the lease itself: ownerLease.ts). Plain `node:fs` and no
 * Effect: the lease watchdog (providers/docker/leaseWatchdogMain.ts), a process of its own per owner,
 * reads it every half second and loads nothing else until the lease goes stale, so that starting
 * one costs an owner's start a bare Node process (loading Effect cost ~0.3 s of CPU, 20 of them for
 * 20 runtimes started at once).
 */
import { readFileSync, statSync } from "node:fs"

/** The lease file's name inside the owner's lease directory. */
export const LEASE_FILE = "lease.json"

/** What the owner promises: a renewal every `renewEveryMs`; stale after `staleAfterMs` without one. */
export interface LeaseTerms {
  readonly renewEveryMs: number
  readonly staleAfterMs: number
}

/** A lease as read: its terms and its last renewal (the file's mtime, epoch ms). */
export interface Lease extends LeaseTerms {
  readonly renewedAt: number
}

/** The terms in a lease file's text, or null when it is not our format. */
const termsOf = (text: string): LeaseTerms | null => {
  const parsed: unknown = JSON.parse(text)
  if (typeof parsed !== "object" || parsed === null) return null
  const { renewEveryMs, staleAfterMs } = parsed as Record<string, unknown>
  return typeof renewEveryMs === "number" && typeof staleAfterMs === "number" ? { renewEveryMs, staleAfterMs } : null
}

/** The lease in `file`, or null when it cannot be read (missing, not a regular file, not our format). */
export const readLease = (file: string): Lease | null => {
  try {
    const stat = statSync(file)
    if (!stat.isFile()) return null
    const terms = termsOf(readFileSync(file, "utf8"))
    return terms === null ? null : { ...terms, renewedAt: stat.mtimeMs }
  } catch {
    return null
  }
}

/** True when a readable lease was not renewed within its terms (wall clock: for one-off checks). */
export const isStale = (lease: Lease, now = Date.now()): boolean => now - lease.renewedAt > lease.staleAfterMs
