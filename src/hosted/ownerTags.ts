/**
 * The one owner-tag scheme of every hosted runtime (src/hosted/): what a sandbox carries as its
 * provider keeps key/value pairs (E2B's metadata, Modal's tags, Daytona's labels, Runloop's
 * metadata): our marker, the session, the owner (host and pid, for the reaper) and the session
 * key, for attaching by session id. Anyone holding the account's credentials can read them, and can
 * run commands in the sandbox anyway (docs/security.md). One liveness rule goes with them
 * (`ownerGone`): judged only on the owner's own host, where a pid means something.
 */
import { hostname } from "node:os"
import { processAlive } from "../runtime/processAlive.ts"

export const TAGS = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  /** Sandboxes kept alive on release outlive their owner: the reaper leaves them. */
  keepAlive: "effect-sandbox.keep-alive",
  sessionKey: "effect-sandbox.session-key",
  /** A snapshot (src/hosted/snapshots.ts), not a sandbox. */
  snapshot: "effect-sandbox.snapshot"
} as const

/** The metadata of a new sandbox. */
export const sandboxTags = (input: {
  readonly sessionId: string
  readonly sessionKey: string
  readonly keepAlive: boolean
}): Record<string, string> => ({
  [TAGS.managed]: "true",
  [TAGS.session]: input.sessionId,
  [TAGS.ownerHost]: hostname(),
  [TAGS.ownerPid]: String(process.pid),
  [TAGS.keepAlive]: String(input.keepAlive),
  [TAGS.sessionKey]: input.sessionKey
})

/**
 * The metadata of a new snapshot: a sandbox's, without the session key (a snapshot is no way into
 * the session), `keepAlive` saying whether it was kept on purpose.
 */
export const snapshotTags = (input: { readonly sessionId: string; readonly keep: boolean }): Record<string, string> => {
  const { [TAGS.sessionKey]: _, ...tags } = sandboxTags({ ...input, sessionKey: "", keepAlive: input.keep })
  return { ...tags, [TAGS.snapshot]: "true" }
}

/** What a reaper lists: our sandboxes whose owner ran on this host (a pid means nothing elsewhere). */
export const ownedHere = (): Record<string, string> => ({
  [TAGS.managed]: "true",
  [TAGS.ownerHost]: hostname()
})

/**
 * Whether a sandbox listed with `ownedHere` is an orphan: not kept alive, and its owner's process
 * gone. Unreadable pids are not judged.
 */
export const ownerGone = (metadata: Readonly<Record<string, string>>): boolean => {
  const pid = Number(metadata[TAGS.ownerPid])
  return metadata[TAGS.keepAlive] !== "true" && Number.isInteger(pid) && !processAlive(pid)
}
