/**
 * Where owner leases live on the host. Its own module because the owner that makes a lease
 * (ownerLease.ts), the records kept in it (leaseRecords.ts) and the reaper that sweeps stale ones
 * (reaper.ts) all name it, and the owner's watchdog runs the reaper: a shared constant in any one
 * of them would make them import each other in a circle.
 */

/** Lease directories are `<tmpdir>/effect-sandbox-lease-*`: the reaper sweeps stale ones. */
export const LEASE_DIR_PREFIX = "effect-sandbox-lease-"
