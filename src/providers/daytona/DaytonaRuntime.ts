/**
 * DaytonaRuntime: the action server in a Daytona sandbox, through the official `@daytonaio/sdk`,
 * reached through the sandbox's preview link with its token. The driver (driver.ts) says what
 * Daytona can do; the hosted runtime (src/hosted/) does the rest. See docs/runtimes/daytona.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { daytonaDriver } from "./driver.ts"

export type { DaytonaRuntimeOptions } from "./options.ts"

/** Warm Daytona sandboxes waiting for a runtime. */
export class DaytonaSandboxPool extends Context.Service<DaytonaSandboxPool, ProvisionedPool>()(
  "effect-sandbox/DaytonaSandboxPool"
) {}

export const DaytonaRuntime = hostedRuntime(daytonaDriver, DaytonaSandboxPool)
