/**
 * Every container a DockerRuntime creates carries labels naming its session,
 * its owner (host and pid: for people reading `docker ps`, never for deciding
 * anything, since a pid means nothing outside its PID namespace) and the
 * owner's lease directory (ownerLease.ts): the only proof the reaper acts on.
 */
import { hostname } from "node:os"

export const LABEL = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  /** The owner's lease directory on the host; absent on kept-alive containers, which outlive their owner. */
  ownerLease: "effect-sandbox.owner.lease",
  createdAt: "effect-sandbox.created-at",
  version: "effect-sandbox.version",
  /** Containers kept alive on release are not reaped with their owner. */
  keepAlive: "effect-sandbox.keep-alive",
  /** The server's session key, for `attach` and restarts (sessionKey.ts: never in the container's environment). */
  sessionKey: "effect-sandbox.session-key",
  /** A temporary host workspace we created: removed with the container, whoever removes it last. */
  temporaryWorkspace: "effect-sandbox.temporary-workspace",
  /**
   * A sandbox of a runtime API server (src/runtimeApi/): the API's container name prefix, so that
   * API servers with different prefixes on one engine see only their own sandboxes (and servers
   * with the same one share them).
   */
  runtimeApi: "effect-sandbox.runtime-api",
  /** Its runtime id, the key the API finds it by. */
  runtimeId: "effect-sandbox.runtime-id",
  /** The `resource_factor` it was started with (its limits are this times the API's base). */
  resourceFactor: "effect-sandbox.resource-factor"
} as const

/** Who created a container, for people (not for reaping: see ownerLease.ts). */
export const ownerLabels = (): Record<string, string> => ({
  [LABEL.ownerHost]: hostname(),
  [LABEL.ownerPid]: String(process.pid)
})
