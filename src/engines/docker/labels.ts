/**
 * Every container a DockerRuntime creates carries labels naming its session,
 * its owner (host and pid: for people reading `docker ps`, never for deciding
 * anything, since a pid means nothing outside its PID namespace) and the
 * owner's lease directory (ownerLease.ts), where the owner records each container
 * (leaseRecords.ts): the only proof the reaper acts on.
 *
 * An image's own labels reach its containers too: Docker merges the labels given
 * at create over the image's, and nothing at create removes one. So every label of
 * ours is written at create (`ourLabels`), empty where it has no value, and an
 * image's `LABEL effect-sandbox.…` never survives into a sandbox; readers treat an
 * empty label as absent (`labelOf`).
 */
import { hostname } from "node:os"

export const LABEL = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  /** The owner's lease directory on the host; empty on kept-alive containers, which outlive their owner. */
  ownerLease: "effect-sandbox.owner.lease",
  createdAt: "effect-sandbox.created-at",
  version: "effect-sandbox.version",
  /** Containers kept alive on release are not reaped with their owner. */
  keepAlive: "effect-sandbox.keep-alive",
  /** The server's session key, for `attach` and restarts (sessionKey.ts: never in the container's environment). */
  sessionKey: "effect-sandbox.session-key",
  /**
   * A temporary host workspace we created: removed with the container, whoever removes it last
   * (the reaper only when the owner's lease directory records it: leaseRecords.ts).
   */
  temporaryWorkspace: "effect-sandbox.temporary-workspace",
  /**
   * A sandbox of a runtime API server (src/runtimeApi/): the API's container name prefix, so that
   * API servers with different prefixes on one engine see only their own sandboxes (and servers
   * with the same one share them).
   */
  runtimeApi: "effect-sandbox.runtime-api",
  /** A snapshot image (providers/docker/snapshot.ts); blank on the sandboxes started from one. */
  snapshot: "effect-sandbox.snapshot",
  /** Its runtime id, the key the API finds it by. */
  runtimeId: "effect-sandbox.runtime-id",
  /** The `resource_factor` it was started with (its limits are this times the API's base). */
  resourceFactor: "effect-sandbox.resource-factor"
} as const

/** One of our label keys. */
export type OurLabel = (typeof LABEL)[keyof typeof LABEL]

/** Values for some of our labels (the rest are written empty). */
export type OurLabels = { readonly [K in OurLabel]?: string | undefined }

/** A container's labels as the engine reports them. */
export type Labels = Readonly<Record<string, string>>

/**
 * The labels a sandbox container is created with: every label of ours, `values` where given and
 * empty elsewhere, so that none of an image's labels of the same name survives the create.
 */
export const ourLabels = (values: OurLabels): Record<OurLabel, string> =>
  Object.fromEntries(Object.values(LABEL).map((key) => [key, values[key] ?? ""])) as Record<OurLabel, string>

/** A label of ours, undefined when missing or empty (what `ourLabels` writes for "none"). */
export const labelOf = (labels: Labels | null | undefined, key: OurLabel): string | undefined => {
  const value = labels?.[key]
  return value === undefined || value === "" ? undefined : value
}

/** Who created a container, for people (not for reaping: see ownerLease.ts). */
export const ownerLabels = (): OurLabels => ({
  [LABEL.ownerHost]: hostname(),
  [LABEL.ownerPid]: String(process.pid)
})
