/**
 * RunloopRuntime: the action server in a Runloop devbox (a microVM), through the official SDK
 * (`@runloop/api-client`), reached through the devbox's authenticated tunnel. The driver
 * (driver.ts) says what Runloop can do; the hosted runtime (src/hosted/) does the rest. See
 * docs/runtimes/runloop.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { runloopDriver } from "./driver.ts"

export type { RunloopRuntimeOptions, RunloopSize } from "./options.ts"

/** Warm Runloop devboxes waiting for a runtime. */
export class RunloopDevboxPool extends Context.Service<RunloopDevboxPool, ProvisionedPool>()(
  "effect-sandbox/RunloopDevboxPool"
) {}

export const RunloopRuntime = hostedRuntime(runloopDriver, RunloopDevboxPool)
