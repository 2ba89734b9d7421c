/**
 * KubernetesRuntime's options: the shared vocabulary (services/RuntimeOptions.ts), OpenHands'
 * KubernetesConfig (namespace, PVC size and class, resources, node selector, tolerations,
 * privileged, image pull secret, ingress domain and TLS secret) and what a pod adds
 * (`runtimeClassName`, labels, annotations, how to reach it). Checked before anything is created:
 * a bad value is an `InvalidOptionsError` naming the field, never a pod the API server refuses
 * half-way through a start.
 */
import { Effect, Schema } from "effect"
import type { ConnectMode, KubeConfigLike, PodOptions } from "../../engines/kubernetes/podOptions.ts"
import type { HostedOptions } from "../../hosted/options.ts"
import { checkLeaseTerms, checkRuntimeOptions } from "../../runtime/options.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { decodeOptions } from "../../schema/issues.ts"
import type { KubeOwnershipOptions } from "./ownershipOptions.ts"

/**
 * What a session is made as: a bare pod, an agent-sandbox `Sandbox` (or `SandboxClaim` with
 * `warmPoolTemplate`), or `auto`: a Sandbox when API discovery shows the agent-sandbox CRDs, else a pod.
 */
export type KubernetesMode = "pod" | "agentSandbox" | "auto"

/**
 * The shared options (src/hosted/options.ts: `user`/`userId` default 74289 `openhands`,
 * DockerRuntime's as root, a uid no account of a node should have; `cpus`/`memoryMiB`;
 * `idleTimeout`: how long an orphan's Lease stays fresh, `ownerLease.staleAfter`'s default;
 * `reapEvery`, 30 s here), the pod's (engines/kubernetes/podOptions.ts) and the cluster's.
 */
export interface KubernetesRuntimeOptions extends HostedOptions, PodOptions {
  /** The cluster (default `KubeConfig.loadFromDefault()`: `KUBECONFIG`, ~/.kube/config, or the in-cluster service account). */
  readonly kubeConfig?: KubeConfigLike
  /** Default: the kubeconfig context's namespace, else `default`. */
  readonly namespace?: string
  /**
   * The runtime image the cluster pulls (docs/runtimes/kubernetes.md says how to push one). Default
   * `sandbox.runtimeContainerImage`, else one built on the local Docker engine from `baseImage`
   * (only clusters that run the local engine's images can use it: Docker Desktop's, the test stand-in).
   */
  readonly image?: string
  /** Base image of a locally built runtime image (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /**
   * With it, an ingress `<session>.<ingressDomain>` to the server's service (its URL in
   * `info.urls.ingress`) and, with `vscode`, `vscode-<session>.<ingressDomain>` to the IDE
   * (`info.urls.vscodeIngress`).
   */
  readonly ingressDomain?: string
  /** The TLS Secret of that ingress (the URL is then https). */
  readonly ingressTlsSecret?: string
  /** More labels and annotations on everything made (ours win on a clash: they are how it is found). */
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  /** Delete the workspace PVC on release too (default false: kept, as OpenHands keeps it). */
  readonly deleteWorkspace?: boolean
  /**
   * `direct`: the pod IP (inside the cluster); `portForward`: the API server's port-forward, through a
   * listener on 127.0.0.1; `auto` (default): direct when running in a cluster (`KUBERNETES_SERVICE_HOST`).
   */
  readonly connect?: ConnectMode
  /**
   * `pod` (default: what every cluster runs), `agentSandbox` (a `Sandbox` of the agent-sandbox CRDs:
   * the cluster expires it when its owner stops renewing, pause is `replicas: 0`), or `auto` (a
   * Sandbox when the cluster serves the CRDs, else a pod). docs/runtimes/kubernetes.md.
   */
  readonly mode?: KubernetesMode
  /**
   * agentSandbox mode through a `SandboxClaim` on this `SandboxTemplate` (the cluster operator's,
   * running the runtime image: `KubernetesRuntime.sandboxTemplate` writes one). The session key's
   * digest reaches the pod through the claim's `env`, so the claim must make its Sandbox anew.
   * The template's pod, not the options, decides the tools: with `vscode: true` a claimed pod that
   * does not run VS Code (a template written without `vscode: true`) fails the start, saying so.
   */
  readonly warmPoolTemplate?: string
  /**
   * The claim's `warmpool`: `none` (default) makes a Sandbox from the template with the key's digest;
   * a pool's name or `default` may hand over a warm pod started before the session key existed,
   * which cannot check it: such a claim is refused with a RuntimeStartError (docs say why).
   */
  readonly warmPool?: string
  /**
   * The owner's heartbeat Lease (every object made is labelled with its name), which the reaper
   * judges: `renewEvery` (10 s), `staleAfter` (`idleTimeout`, else 60 s), `clockSkew` (10 s),
   * `missingLeaseGrace` (20 s). docs/runtimes/kubernetes.md.
   */
  readonly ownerLease?: KubeOwnershipOptions
}

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

const refuse = (message: string) => Effect.fail(new InvalidOptionsError({ message: `Invalid ${SUBJECT}: ${message}` }))

/** Each key of `labels` and `annotations` well-formed and not ours (Schema.Record does not check keys). */
const checkMetadataKeys = Effect.fn("checkMetadataKeys")(function*(options: KubernetesRuntimeOptions) {
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

/** Pod names are `effect-sandbox-<session>` plus `-pvc` and the like: 63 characters at most. */
export const MAX_SESSION_ID = 40

const OptionsSchema = Schema.Struct({
  namespace: Schema.optionalKey(dnsLabel(63)),
  sessionId: Schema.optionalKey(dnsLabel(MAX_SESSION_ID)),
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
  ingressDomain: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/))),
  ingressTlsSecret: Schema.optionalKey(dnsLabel(253)),
  runtimeClassName: Schema.optionalKey(dnsLabel(253)),
  labels: Schema.optionalKey(Schema.Record(Schema.String, labelValue)),
  connect: Schema.optionalKey(Schema.Literals(["auto", "direct", "portForward"])),
  mode: Schema.optionalKey(Schema.Literals(["pod", "agentSandbox", "auto"])),
  warmPoolTemplate: Schema.optionalKey(dnsLabel(253)),
  warmPool: Schema.optionalKey(dnsLabel(253))
})

const SUBJECT = "KubernetesRuntime options"

/**
 * A claim's Sandbox comes from the operator's template: it is always agent-sandbox, and what the
 * runtime would add to a pod of its own (an ingress to its service) has nothing to point at.
 */
const checkClaimOptions = Effect.fn("checkClaimOptions")(function*(options: KubernetesRuntimeOptions) {
  if (options.warmPoolTemplate === undefined) {
    if (options.warmPool !== undefined) yield* refuse("warmPool: needs warmPoolTemplate (the template it pools)")
    return
  }
  if (options.mode === "pod") yield* refuse("warmPoolTemplate: a SandboxClaim needs mode agentSandbox or auto, not pod")
  if (options.ingressDomain !== undefined) {
    yield* refuse("ingressDomain: not with warmPoolTemplate (a claimed Sandbox has no service of the runtime's)")
  }
})

/**
 * Check the options (the shared ones, then the pod's), failing with one line naming each bad field.
 */
export const checkKubernetesOptions = Effect.fn("checkKubernetesOptions")(function*(options: KubernetesRuntimeOptions) {
  yield* checkRuntimeOptions(SUBJECT, options)
  yield* decodeOptions(OptionsSchema, SUBJECT)(options)
  yield* checkLeaseTerms(SUBJECT, { ...options.ownerLease })
  yield* checkClaimOptions(options)
  yield* checkMetadataKeys(options)
})

/**
 * A Kubernetes object as the JSON `kubectl apply` takes (what `KubernetesRuntime.sandboxTemplate`
 * writes): typed here rather than with client-node's classes, so the public declarations need no
 * optional peer to resolve.
 */
export interface KubeManifest {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: {
    readonly name: string
    readonly labels: Readonly<Record<string, string>>
    readonly annotations: Readonly<Record<string, string>>
  }
  readonly spec: Readonly<Record<string, unknown>>
}
