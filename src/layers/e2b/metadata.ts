/**
 * What E2BRuntime writes in a sandbox's E2B metadata (set at create, listed with
 * `Sandbox.list({ query: { metadata } })`): our marker, the session, the owner (host and pid, for
 * the reaper) and the session key, for attaching by session id. Anyone holding the team's API key
 * can read metadata, and can run commands in the sandbox anyway (docs/security.md).
 */
import { hostname } from "node:os"

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
