/**
 * `effect-sandbox/kubernetes`: KubernetesRuntime and its warm pool.
 *
 * A subpath of its own so that only its users install its SDK: `@kubernetes/client-node` is an
 * optional peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export type { ConnectMode, KubeConfigLike, ResourceQuantities, Toleration } from "./engines/kubernetes/podOptions.ts"
export { PROVIDER_RETRY } from "./hosted/options.ts"
export {
  type KubeManifest,
  type KubernetesMode,
  KubernetesRuntime,
  type KubernetesRuntimeOptions,
  KubernetesSandboxPool
} from "./providers/kubernetes/KubernetesRuntime.ts"
