/**
 * `effect-sandbox/kubernetes`: KubernetesRuntime and its warm pool.
 *
 * A subpath of its own so that only its users install its SDK: `@kubernetes/client-node` is an
 * optional peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export type {
  ConnectMode,
  KubeConfigLike,
  KubeManifest,
  KubernetesMode,
  KubernetesRuntimeOptions,
  ResourceQuantities,
  Toleration
} from "./layers/kubernetes/options.ts"
export { type KubernetesAttachOptions, KubernetesRuntime, KubernetesSandboxPool } from "./layers/KubernetesRuntime.ts"
