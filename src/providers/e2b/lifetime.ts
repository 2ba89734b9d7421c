/**
 * E2B's cap on a sandbox's life (e2b-dev/infra, `KeepAliveFor`): counted from the sandbox's start,
 * and from each resume (E2B makes the VM anew from its snapshot), at the team plan's length (1 h
 * Hobby, 24 h Pro). A renewal is clamped to what is left of it, one past it is refused with 400
 * "Max instance length exceeded", and the sandbox ends. The driver renews within the cap, says
 * when a renewal no longer reaches as far as asked, stops renewing at the cap, and names the cap
 * as the reason when the sandbox ends there.
 */
import { Duration } from "effect"

/** The Hobby plan's cap, E2B's default team's: a Pro team sets `lifetime: "24 hours"`. */
export const PLAN_LIFETIME: Duration.Input = "1 hour"

/** Where one sandbox stands against the cap. */
export interface Life {
  /** When its life began (this process's clock): its create, its last resume, or E2B's `startedAt`. */
  startedAt: number
  /** The end was announced (a clamped renewal logged once). */
  announced: boolean
  /** The cap was reached (E2B's 400 said so, or nothing was left to ask): no renewal is sent any more. */
  capped: boolean
  /** E2B no longer has the sandbox (a renewal's 404): nothing is renewed; the watch tells why. */
  gone: boolean
}

export const newLife = (startedAt: number): Life => ({ startedAt, announced: false, capped: false, gone: false })

/** How long a renewal may ask at `now`: the idle timeout, or what is left of the life (0: nothing). */
export const renewalMillis = (life: Life, now: number, lifetimeMs: number, timeoutMs: number): number =>
  Math.max(0, Math.min(timeoutMs, life.startedAt + lifetimeMs - now))

/**
 * Whether a sandbox that ended by `now` ended at the cap, not killed before: the cap was reached,
 * its last renewals could not reach as far as asked (E2B's clock of its start runs a little ahead of
 * ours, which starts at the create's answer), or its life had run.
 */
export const pastCap = (life: Life, now: number, lifetimeMs: number): boolean =>
  life.capped || life.announced || now - life.startedAt >= lifetimeMs

const lifetimeText = (lifetimeMs: number) => Duration.format(Duration.millis(lifetimeMs))

/** Why the plan matters, said once wherever the cap is named. */
const planNote = "E2B caps a sandbox's life from its start or resume at the team plan's: 1 hour Hobby, 24 hours Pro; " +
  "option lifetime"

/** The warning of a clamped renewal: when the sandbox will end, and why. */
export const endingMessage = (id: string, leftMs: number, lifetimeMs: number): string =>
  `E2B sandbox ${id} ends in ${Duration.format(Duration.seconds(Math.ceil(leftMs / 1000)))}, at its lifetime of ` +
  `${lifetimeText(lifetimeMs)} (${planNote}); renewals cannot extend it.`

/** The disconnect's reason of a sandbox that ended at the cap. */
export const cappedMessage = (id: string, lifetimeMs: number): string =>
  `E2B ended sandbox ${id} at its lifetime of ${lifetimeText(lifetimeMs)} (${planNote})`

/** The 400 E2B answers a renewal past the cap. */
export const isMaxLengthExceeded = (error: { readonly status?: number; readonly message: string }): boolean =>
  error.status === 400 && error.message.includes("Max instance length exceeded")
