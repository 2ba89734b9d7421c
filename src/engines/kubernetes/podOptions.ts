/**
 * What a session's pod is made of beyond the runtime's shared options: OpenHands' KubernetesConfig
 * (PVC size and class, resources, node selector, tolerations, privileged, image pull secret) and
 * what a pod adds (`runtimeClassName`). Shared by the Kubernetes driver and the runtime API's
 * Kubernetes backend, which make the same pod. Typed structurally, without client-node's classes,
 * so the public declarations need no optional peer to resolve.
 */
import { Effect, Schema } from "effect"
import { checkRuntimeOptions } from "../../runtime/options.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { decodeOptions } from "../../schema/issues.ts"
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

/** The cluster, and the options a pod (and its workspace PVC) is made from. */
export interface PodOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The cluster (default `KubeConfig.loadFromDefault()`: `KUBECONFIG`, ~/.kube/config, or the in-cluster service account). */
  readonly kubeConfig?: KubeConfigLike
  /** Default: the kubeconfig context's namespace, else `default`. */
  readonly namespace?: string
  /**
   * `direct`: the pod IP (inside the cluster); `portForward`: the API server's port-forward, through a
   * listener on 127.0.0.1; `auto` (default): direct when running in a cluster (`KUBERNETES_SERVICE_HOST`).
   */
  readonly connect?: ConnectMode
  /**
   * The runtime image the cluster pulls (docs/runtimes/kubernetes.md says how to push one). Default
   * `sandbox.runtimeContainerImage`, else one built on the local Docker engine from `baseImage`
   * (only clusters that run the local engine's images can use it: Docker Desktop's, the test stand-in).
   */
  readonly image?: string
  /** Base image of a locally built runtime image (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /** The sandbox user's uid: the pod's `runAsUser`, `runAsGroup` and `fsGroup`. */
  readonly userId?: number
  /** More labels and annotations on everything made (ours win on a clash: they are how it is found). */
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  /** Delete the workspace PVC on release too (default false: kept, as OpenHands keeps it). */
  readonly deleteWorkspace?: boolean
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

/** A DNS-1123 label: what names a namespace, and (prefixed) the pod of a session. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
/** A resource quantity: a decimal number with an optional SI or binary suffix. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/
/** A label value: at most 63 characters, alphanumeric at both ends. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

/**
 * A label or annotation key: an optional DNS-subdomain prefix and `/`, then a name of at most 63
 * characters, alphanumeric at both ends. Our own prefix is refused: those labels are how the
 * runtime and the reaper find objects, and a user's `effect-sandbox.owner` on a kept-alive session
 * would hand it to a reaper.
 */
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const OWN_PREFIX = "effect-sandbox."

/** Each key of `labels` and `annotations` well-formed and not ours (Schema.Record does not check keys). */
const checkMetadataKeys = Effect.fn("checkMetadataKeys")(function*(subject: string, options: PodOptions) {
  const refuse = (message: string) =>
    Effect.fail(new InvalidOptionsError({ message: `Invalid ${subject}: ${message}` }))
  for (const field of ["labels", "annotations"] as const) {
    for (const key of Object.keys(options[field] ?? {})) {
      if (!QUALIFIED_NAME.test(key)) {
        yield* refuse(
          `${field}: ${
            JSON.stringify(key)
          } is not a key Kubernetes takes ([prefix/]name, name at most 63 characters, alphanumeric at both ends)`
        )
      }
      if (key.startsWith(OWN_PREFIX)) {
        yield* refuse(
          `${field}: ${
            JSON.stringify(key)
          }: the ${OWN_PREFIX} prefix is the runtime's own (how sessions and owners are found)`
        )
      }
    }
  }
})

const dnsLabel = (max: number) => Schema.String.check(Schema.isPattern(DNS_LABEL), Schema.isMaxLength(max))
const quantity = Schema.String.check(Schema.isPattern(QUANTITY))
const quantities = Schema.Struct({ cpu: Schema.optionalKey(quantity), memory: Schema.optionalKey(quantity) })
const labelValue = Schema.String.check(Schema.isPattern(LABEL_VALUE), Schema.isMaxLength(63))

const PodOptionsSchema = Schema.Struct({
  namespace: Schema.optionalKey(dnsLabel(63)),
  image: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  userId: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  pvcStorageSize: Schema.optionalKey(quantity),
  pvcStorageClass: Schema.optionalKey(dnsLabel(253)),
  resources: Schema.optionalKey(Schema.Struct({
    requests: Schema.optionalKey(quantities),
    limits: Schema.optionalKey(quantities)
  })),
  nodeSelector: Schema.optionalKey(Schema.Record(Schema.String, labelValue)),
  tolerations: Schema.optionalKey(Schema.Array(Schema.Struct({
    key: Schema.optionalKey(Schema.String),
    operator: Schema.optionalKey(Schema.Literals(["Exists", "Equal"])),
    value: Schema.optionalKey(Schema.String),
    effect: Schema.optionalKey(Schema.Literals(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
    tolerationSeconds: Schema.optionalKey(Schema.Int)
  }))),
  imagePullSecret: Schema.optionalKey(dnsLabel(253)),
  runtimeClassName: Schema.optionalKey(dnsLabel(253)),
  labels: Schema.optionalKey(Schema.Record(Schema.String, labelValue)),
  connect: Schema.optionalKey(Schema.Literals(["auto", "direct", "portForward"]))
})

/**
 * Check the shared options and the pod's, failing with one line naming each bad field
 * (`Invalid <subject>: <field>: ...`), before anything is made: never a pod the API server refuses
 * half-way through a start.
 */
export const checkPodOptions = Effect.fn("checkPodOptions")(function*(subject: string, options: PodOptions) {
  yield* checkRuntimeOptions(subject, options)
  yield* decodeOptions(PodOptionsSchema, subject)(options)
  yield* checkMetadataKeys(subject, options)
})
