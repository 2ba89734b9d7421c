/**
 * KubernetesRuntime: the action server in a pod, through `@kubernetes/client-node` (an optional
 * peer dependency, loaded when a layer is built), after OpenHands' KubernetesRuntime; or in an
 * agent-sandbox `Sandbox`, made or claimed from a warm pool (`mode`, `warmPoolTemplate`). The
 * driver (driver.ts) says what a cluster can do; the hosted runtime (src/hosted/) does the rest.
 * See docs/runtimes/kubernetes.md.
 */
import { Context } from "effect"
import { hostedRuntime } from "../../hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../provisioned/provisioned.ts"
import { kubernetesDriver } from "./driver.ts"
import { sandboxTemplate } from "./sandboxTemplate.ts"

export type { KubeManifest, KubernetesMode, KubernetesRuntimeOptions } from "./options.ts"

/** Warm pods waiting for a runtime. */
export class KubernetesSandboxPool extends Context.Service<KubernetesSandboxPool, ProvisionedPool>()(
  "effect-sandbox/KubernetesSandboxPool"
) {}

export const KubernetesRuntime = {
  ...hostedRuntime(kubernetesDriver, KubernetesSandboxPool),
  /** The SandboxTemplate for `warmPoolTemplate` (the operator applies it): the runtime's pod, locked until claimed. */
  sandboxTemplate
}
