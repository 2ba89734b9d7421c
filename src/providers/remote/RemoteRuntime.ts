/**
 * RemoteRuntime: the sandbox is a runtime that a runtime API (OpenHands' remote runtime API, spec
 * §14) starts, pauses and stops on our behalf; the action server inside it is reached through the
 * URL the API gives, with the key the API gives. The driver (driver.ts) says what the API can do;
 * the hosted runtime (src/hosted/) does the rest. See docs/runtimes/remote.md.
 */
import { Context, Schedule } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { remoteDriver } from "./driver.ts"
import type { RemoteRuntimeOptions } from "./options.ts"
import { actionServerRetrySchedule, apiRetrySchedule } from "./policies.ts"

export type { RemoteRuntimeOptions } from "./options.ts"

/** Warm runtimes of the runtime API waiting for a runtime. */
export class RemoteRuntimePool extends Context.Service<RemoteRuntimePool, ProvisionedPool>()(
  "effect-sandbox/RemoteRuntimePool"
) {}

/**
 * OpenHands' numbers where the options leave them: runtime-API calls retried as its client does,
 * and action-server requests re-sent by the same schedule (none without `enableRetries`).
 */
const withDefaults = <O extends RemoteRuntimeOptions>(options: O): O => ({
  ...options,
  providerRetry: options.providerRetry ?? apiRetrySchedule,
  schedules: {
    ...options.schedules,
    retry: options.schedules?.retry ??
      (options.enableRetries === false ? Schedule.recurs(0) : actionServerRetrySchedule)
  }
})

const hosted = hostedRuntime(remoteDriver, RemoteRuntimePool)

export const RemoteRuntime: typeof hosted = {
  ...hosted,
  layer: (options = {}) => hosted.layer(withDefaults(options)),
  layerPool: (options) => hosted.layerPool(withDefaults(options)),
  attach: (sessionId, options = {}) => hosted.attach(sessionId, withDefaults(options))
}
