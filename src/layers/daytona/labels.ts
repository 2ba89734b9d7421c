/**
 * Every Daytona sandbox a DaytonaRuntime creates carries labels: its session (for `attach` and
 * for people), its owner (host and pid, for people only) and the owner's heartbeat, the time the
 * owner last renewed it (heartbeat.ts). The reaper (reaper.ts) acts on the heartbeat only.
 */
import type { Duration } from "effect"
import { hostname } from "node:os"

export const LABEL = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  /** ISO time of the owner's last renewal; absent on kept-alive sandboxes, which outlive their owner. */
  renewedAt: "effect-sandbox.owner.renewed-at",
  /** How long without a renewal makes the owner gone (ms), as the owner set it. */
  staleAfterMs: "effect-sandbox.owner.stale-after-ms",
  /**
   * The server's session key, for `attach`: readable only by holders of the organisation's API
   * key (who control the sandbox anyway), never inside the sandbox.
   */
  sessionKey: "effect-sandbox.session-key"
} as const

/** Who created a sandbox, for people reading the dashboard. */
export const ownerLabels = (): Record<string, string> => ({
  [LABEL.ownerHost]: hostname(),
  [LABEL.ownerPid]: String(process.pid)
})

/** The heartbeat's terms (heartbeat.ts), and the reaper's pace. Here, not there: the public options name it without the SDK's types. */
export interface HeartbeatOptions {
  /** Default 30 seconds. */
  readonly renewEvery?: Duration.Input
  /** Default 5 minutes: generous, since the reaper compares the owner's clock with its own. */
  readonly staleAfter?: Duration.Input
  /** How often the reaper looks for sandboxes of dead owners (default 2 minutes). */
  readonly reapEvery?: Duration.Input
}
