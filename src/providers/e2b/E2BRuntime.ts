/**
 * E2BRuntime: the action server in an E2B sandbox (a Firecracker microVM), through the official
 * `e2b` SDK, reached over E2B's port exposure with the shared HTTP client. The driver
 * (driver.ts) says what E2B can do; the hosted runtime (src/hosted/) does the rest. See
 * docs/runtimes/e2b.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { e2bDriver } from "./driver.ts"

export type { E2BRuntimeOptions } from "./options.ts"

/** Warm E2B sandboxes waiting for a runtime. */
export class E2BSandboxPool extends Context.Service<E2BSandboxPool, ProvisionedPool>()(
  "effect-sandbox/E2BSandboxPool"
) {}

export const E2BRuntime = hostedRuntime(e2bDriver, E2BSandboxPool)
