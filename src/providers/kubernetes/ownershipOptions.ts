/**
 * The terms of an owner's Lease and the reaper's pace, apart from ownerLease.ts and reaper.ts
 * because those load `@kubernetes/client-node` (an optional peer): the public options reach
 * these types, and a user's declarations must resolve without the client installed.
 */
import type { Duration } from "effect"

export interface KubeOwnerLeaseOptions {
  /** How often the owner renews its Lease (default 10 s). */
  readonly renewEvery?: Duration.Input | undefined
  /**
   * How long without renewal proves the owner gone (default 60 s), written as the Lease's
   * `leaseDurationSeconds` (whole seconds, rounded up) and used as the sandboxes' expiry.
   */
  readonly staleAfter?: Duration.Input | undefined
}

export interface KubeReaperOptions {
  /** How far an owner's clock may lag the API server's before its renewals look late (default 10 s). */
  readonly clockSkew?: Duration.Input | undefined
  /** How long a Lease must stay missing before its objects are reaped (default 20 s: two default renewals). */
  readonly missingLeaseGrace?: Duration.Input | undefined
}

/** The lease's terms and how the reaper judges them (defaults: renew 10 s, stale 60 s); its pace is `reapEvery`. */
export type KubeOwnershipOptions = KubeOwnerLeaseOptions & KubeReaperOptions
