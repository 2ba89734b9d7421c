/**
 * What the cloud runtimes whose provider keeps string metadata on a sandbox (E2B's metadata,
 * Runloop's devbox metadata) write there at create: our marker, the session, the owner (host and
 * pid, for the reaper) and the session key, for attaching by session id. Anyone holding the
 * account's API key can read metadata, and can run commands in the sandbox anyway
 * (docs/security.md).
 */
import { hostname } from "node:os"
import { processAlive } from "../../runtime/processAlive.ts"

export const METADATA = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  /** Sandboxes kept alive on release outlive their owner: the reaper leaves them. */
  keepAlive: "effect-sandbox.keep-alive",
  sessionKey: "effect-sandbox.session-key"
} as const

/** The metadata of a new sandbox. */
export const sandboxMetadata = (input: {
  readonly sessionId: string
  readonly sessionKey: string
  readonly keepAlive: boolean
}): Record<string, string> => ({
  [METADATA.managed]: "true",
  [METADATA.session]: input.sessionId,
  [METADATA.ownerHost]: hostname(),
  [METADATA.ownerPid]: String(process.pid),
  [METADATA.keepAlive]: String(input.keepAlive),
  [METADATA.sessionKey]: input.sessionKey
})

/**
 * The pid of the sandbox's owner when that owner ran on this host and is gone (the reaper's
 * test); undefined for anything else: not ours, kept alive, another host's (a pid means nothing
 * elsewhere), or an owner still running.
 */
export const deadOwner = (metadata: Readonly<Record<string, string>>): number | undefined => {
  const pid = Number(metadata[METADATA.ownerPid])
  const ours = metadata[METADATA.managed] === "true" && metadata[METADATA.ownerHost] === hostname()
  return ours && metadata[METADATA.keepAlive] !== "true" && Number.isInteger(pid) && !processAlive(pid)
    ? pid
    : undefined
}
