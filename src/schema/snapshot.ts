/**
 * Snapshots as data: the handle `Runtime.snapshot` gives (and new runtimes start from with the
 * `fromSnapshot` option), and the typed failure of taking, starting from or removing one. A handle
 * is plain data, so it can be written down and a later process (or another host on the same
 * provider) can start from it, as long as the provider still keeps the snapshot.
 */
import { Schema } from "effect"
import { ProviderError } from "./errors.ts"

/**
 * What a snapshot keeps: the sandbox's files (its whole filesystem, the workspace with it), its
 * files and its memory (running processes come back as they were), or only its workspace volume
 * (Kubernetes: a VolumeSnapshot of the workspace PVC; the root filesystem is the image's again).
 */
export const SnapshotKeeps = Schema.Literals(["files", "files+memory", "workspace"])
export type SnapshotKeeps = typeof SnapshotKeeps.Type

/** A snapshot of a sandbox, by its provider's id. */
export const Snapshot = Schema.Struct({
  /** The provider's id of it (Docker: the image's `repository:tag`). */
  id: Schema.String,
  /** The provider's name in messages ("Docker"), checked against the layer a runtime starts from it. */
  provider: Schema.String,
  /** What a runtime started from it gets back. */
  keeps: SnapshotKeeps,
  /** The session of the runtime it was taken of. */
  sessionId: Schema.String,
  /** When it was taken, as an ISO 8601 text. */
  createdAt: Schema.String,
  /**
   * Kept on purpose (`keep: true`): neither removed with the runtime that took it nor reaped once
   * its owner is gone; `removeSnapshot` ends it.
   */
  kept: Schema.Boolean
})
export type Snapshot = typeof Snapshot.Type

/** `Runtime.snapshot`'s options. */
export interface SnapshotOptions {
  /** Keep it after the runtime that took it is released (default false: removed then, and reaped if its owner dies). */
  readonly keep?: boolean
}

/**
 * Taking, listing, starting from or removing a snapshot failed: at the provider (`provider`
 * carries its error), or because the sandbox cannot be snapshotted as it is (the message says why).
 */
export class RuntimeSnapshotError extends Schema.TaggedError<RuntimeSnapshotError>()("RuntimeSnapshotError", {
  operation: Schema.Literals(["snapshot", "fork", "list", "remove"]),
  provider: Schema.optionalKey(ProviderError),
  message: Schema.String
}) {}
