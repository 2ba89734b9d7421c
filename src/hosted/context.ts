/**
 * What every sandbox of one hosted layer (or pool) shares: its driver, names and options. The
 * provisioner (provisioner.ts) starts sandboxes from it, and snapshots.ts starts forks from it.
 */
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import type { Driver } from "../services/Driver.ts"
import type { HostedOptions } from "./options.ts"

/** One layer's (or pool's) driver, with the names and options every sandbox of it shares. */
export interface HostedContext<O extends HostedOptions, S> {
  readonly provider: string
  /** The provider's word for a sandbox ("sandbox", Runloop's "devbox"). */
  readonly noun: string
  readonly kind: string
  readonly driver: Driver<S>
  readonly options: O
  readonly sandbox: SandboxConfig
  /** `attach`: the session's sandbox must exist (never made anew). */
  readonly attachOnly: boolean
  /** The snapshot id a new sandbox starts from (the `fromSnapshot` option, checked). */
  readonly fromSnapshot?: string | undefined
}
