/**
 * ModalRuntime: the action server in a Modal sandbox (gVisor), through the official `modal` SDK
 * (0.11), reached through the sandbox's encrypted tunnel with the shared HTTP client. The driver
 * (driver.ts) says what Modal can do; the hosted runtime (src/hosted/) does the rest. See
 * docs/runtimes/modal.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { modalDriver } from "./driver.ts"

export type { ModalRuntimeOptions } from "./options.ts"

/** Warm Modal sandboxes waiting for a runtime. */
export class ModalSandboxPool extends Context.Service<ModalSandboxPool, ProvisionedPool>()(
  "effect-sandbox/ModalSandboxPool"
) {}

export const ModalRuntime = hostedRuntime(modalDriver, ModalSandboxPool)
