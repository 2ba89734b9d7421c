/**
 * What a session's pod is made of beyond the runtime's shared options: OpenHands' KubernetesConfig
 * (PVC size and class, resources, node selector, tolerations, privileged, image pull secret) and
 * what a pod adds (`runtimeClassName`). Shared by the Kubernetes driver and the runtime API's
 * Kubernetes backend, which make the same pod. Typed structurally, without client-node's classes,
 * so the public declarations need no optional peer to resolve.
 */
import type { RuntimeOptions } from "../../services/RuntimeOptions.ts"

/**
 * A `KubeConfig` of `@kubernetes/client-node`, named structurally so that importing
 * `effect-sandbox/kubernetes` needs neither the package nor its types (it is an optional peer).
 */
export interface KubeConfigLike {
  getCurrentContext(): string
}

/** A pod toleration, as Kubernetes spells it (OpenHands' `tolerations_yaml`, already parsed). */
export interface Toleration {
  readonly key?: string
  readonly operator?: "Exists" | "Equal"
  readonly value?: string
  readonly effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute"
  readonly tolerationSeconds?: number
}

/** CPU and memory as Kubernetes quantities (`"500m"`, `"2Gi"`). */
export interface ResourceQuantities {
  readonly cpu?: string
  readonly memory?: string
}

/** How the owner reaches the server: a pod IP from inside the cluster, or the API server's port-forward. */
export type ConnectMode = "auto" | "direct" | "portForward"

/** The options a pod (and its workspace PVC) is made from. */
export interface PodOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The workspace PVC's size (default `2Gi`, as OpenHands) and storage class (default the cluster's). */
  readonly pvcStorageSize?: string
  readonly pvcStorageClass?: string
  /** CPU cores requested and the memory limit in MiB (half of it requested); `resources` overrides them. */
  readonly cpus?: number
  readonly memoryMiB?: number
  /** As Kubernetes quantities (default OpenHands': requests cpu 1, memory 1Gi; limits memory 2Gi). */
  readonly resources?: { readonly requests?: ResourceQuantities; readonly limits?: ResourceQuantities }
  readonly nodeSelector?: Readonly<Record<string, string>>
  readonly tolerations?: ReadonlyArray<Toleration>
  /** Run the container privileged (default false; docs/security.md says what that gives away). */
  readonly privileged?: boolean
  /** A docker-registry Secret in the namespace the kubelet pulls the image with. */
  readonly imagePullSecret?: string
  /** The pod's RuntimeClass: `gvisor`, `kata`, ... (what isolates it beyond a container). */
  readonly runtimeClassName?: string
}

/** `auto` resolved: direct inside a cluster (the kubelet sets KUBERNETES_SERVICE_HOST in every pod). */
export const connectMode = (mode: ConnectMode | undefined): "direct" | "portForward" =>
  mode === "direct" || mode === "portForward"
    ? mode
    : process.env["KUBERNETES_SERVICE_HOST"] === undefined
    ? "portForward"
    : "direct"
