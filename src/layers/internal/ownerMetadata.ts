/**
 * What a cloud runtime whose provider keeps free-form key/value pairs on a sandbox (E2B's
 * metadata, Modal's tags) writes there: our marker, the session, the owner (host and pid, for the
 * reaper) and the session key, for attaching by session id. Anyone holding the account's
 * credentials can read them, and can run commands in the sandbox anyway (docs/security.md).
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

/** What a reaper lists: our sandboxes whose owner ran on this host (a pid means nothing elsewhere). */
export const ownedHere = (): Record<string, string> => ({
  [METADATA.managed]: "true",
  [METADATA.ownerHost]: hostname()
})

/**
 * Whether a sandbox listed with `ownedHere` is an orphan: not kept alive, and its owner's process
 * gone. Unreadable pids are not judged.
 */
export const ownerGone = (metadata: Readonly<Record<string, string>>): boolean => {
  const pid = Number(metadata[METADATA.ownerPid])
  return metadata[METADATA.keepAlive] !== "true" && Number.isInteger(pid) && !processAlive(pid)
}
