/**
 * KubernetesRuntime's options: the hosted runtimes' shared vocabulary (src/hosted/options.ts), the
 * cluster's and the pod's (engines/kubernetes/podOptions.ts, which the runtime API's pods share),
 * and what a session adds: an ingress, agent-sandbox mode and claims, the owner's Lease. Checked
 * before anything is created: a bad value is an `InvalidOptionsError` naming the field, never a
 * pod the API server refuses half-way through a start.
 */
import { Duration, Effect, Option, Schema } from "effect"
import { checkPodOptions, type PodOptions } from "../../engines/kubernetes/podOptions.ts"
import type { HostedOptions } from "../../hosted/options.ts"
import { checkLeaseTerms } from "../../runtime/options.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { decodeOptions } from "../../schema/issues.ts"

/**
 * What a session is made as: a bare pod, an agent-sandbox `Sandbox` (or `SandboxClaim` with
 * `warmPoolTemplate`), or `auto`: a Sandbox when API discovery shows the agent-sandbox CRDs, else a pod.
 */
export type KubernetesMode = "pod" | "agentSandbox" | "auto"

/** The owner's Lease (ownerLease.ts), typed here: these options load no client-node. */
export interface KubeOwnerLeaseOptions {
  /** How often the owner renews its Lease (default 10 s). */
  readonly renewEvery?: Duration.Input | undefined
  /**
   * How long without renewal proves the owner gone (default 60 s), written as the Lease's
   * `leaseDurationSeconds` (whole seconds, rounded up) and used as the sandboxes' expiry.
   */
  readonly staleAfter?: Duration.Input | undefined
}

export interface KubeReaperOptions {
  /** How far an owner's clock may lag the API server's before its renewals look late (default 10 s). */
  readonly clockSkew?: Duration.Input | undefined
  /** How long a Lease must stay missing before its objects are reaped (default 20 s: two default renewals). */
  readonly missingLeaseGrace?: Duration.Input | undefined
}

/** The lease's terms and how the reaper judges them (defaults: renew 10 s, stale 60 s); its pace is `reapEvery`. */
export type KubeOwnershipOptions = KubeOwnerLeaseOptions & KubeReaperOptions

/**
 * The shared options (src/hosted/options.ts: `user`/`userId` default 74289 `openhands`,
 * DockerRuntime's as root, a uid no account of a node should have; `cpus`/`memoryMiB`;
 * `idleTimeout`: how long an orphan's Lease stays fresh, `ownerLease.staleAfter`'s default;
 * `reapEvery`, 30 s here), the cluster's and the pod's (engines/kubernetes/podOptions.ts), and
 * what a session adds: an ingress, agent-sandbox mode and claims, the owner's Lease.
 */
export interface KubernetesRuntimeOptions extends HostedOptions, PodOptions {
  /**
   * With it, an ingress `<session>.<ingressDomain>` to the server's service (its URL in
   * `info.urls.ingress`) and, with `vscode`, `vscode-<session>.<ingressDomain>` to the IDE
   * (`info.urls.vscodeIngress`).
   */
  readonly ingressDomain?: string
  /** The TLS Secret of that ingress (the URL is then https). */
  readonly ingressTlsSecret?: string
  /**
   * The IngressClass that serves it (`spec.ingressClassName`); default none: the cluster's default
   * class (the one annotated `ingressclass.kubernetes.io/is-default-class`), where it has one.
   */
  readonly ingressClassName?: string
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
  /**
   * The VolumeSnapshotClass of `snapshot` and `fork` (a VolumeSnapshot of the workspace PVC);
   * default: the cluster's default class, which only a ClusterRole may read (docs/snapshots.md).
   */
  readonly volumeSnapshotClassName?: string
}

/** A DNS-1123 label of at most `max` characters. */
const dnsLabel = (max: number) =>
  Schema.String.check(Schema.isPattern(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/), Schema.isMaxLength(max))

/** Pod names are `effect-sandbox-<session>` plus `-pvc` and the like: 63 characters at most. */
const MAX_SESSION_ID = 40

const OptionsSchema = Schema.Struct({
  sessionId: Schema.optionalKey(dnsLabel(MAX_SESSION_ID)),
  ingressDomain: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/))),
  ingressTlsSecret: Schema.optionalKey(dnsLabel(253)),
  ingressClassName: Schema.optionalKey(dnsLabel(253)),
  mode: Schema.optionalKey(Schema.Literals(["pod", "agentSandbox", "auto"])),
  warmPoolTemplate: Schema.optionalKey(dnsLabel(253)),
  warmPool: Schema.optionalKey(dnsLabel(253)),
  volumeSnapshotClassName: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/), Schema.isMaxLength(253))
  )
})

const SUBJECT = "KubernetesRuntime options"

const refuse = (message: string) => Effect.fail(new InvalidOptionsError({ message: `Invalid ${SUBJECT}: ${message}` }))

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
  yield* checkPodOptions(SUBJECT, options)
  yield* decodeOptions(OptionsSchema, SUBJECT)(options)
  yield* checkLeaseTerms(SUBJECT, { ...options.ownerLease })
  // idleTimeout is the Lease's term unless ownerLease names one: the owner renews well inside it.
  const renewEvery = Duration.fromInputUnsafe(options.ownerLease?.renewEvery ?? "10 seconds")
  const idle = options.idleTimeout === undefined
    ? undefined
    : Option.getOrUndefined(Duration.fromInput(options.idleTimeout))
  if (
    options.ownerLease?.staleAfter === undefined && idle !== undefined && Duration.isLessThanOrEqualTo(idle, renewEvery)
  ) {
    yield* refuse(
      `idleTimeout: must be longer than ownerLease.renewEvery (${
        Duration.format(renewEvery)
      }): it is the owner Lease's term`
    )
  }
  yield* checkClaimOptions(options)
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
