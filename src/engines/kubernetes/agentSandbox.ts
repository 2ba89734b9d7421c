/**
 * The agent-sandbox mode (kubernetes-sigs/agent-sandbox): instead of a bare pod,
 * a `Sandbox` (`agents.x-k8s.io/v1alpha1`: one pod with a stable identity,
 * `replicas` 0/1 to suspend and resume, `shutdownTime` for expiry on the
 * cluster's side), or a `SandboxClaim` (`extensions.agents.x-k8s.io/v1alpha1`)
 * that takes a ready Sandbox from a `SandboxWarmPool`, so the cluster keeps the
 * warm pool. Readiness comes from watches on the Sandbox and its pod (named
 * after the Sandbox), never from polling; a pod that cannot start (crash loop, a
 * bad image name) fails at once with the pod's own reason, one that may still (no
 * node yet, a failed pull) at the deadline with it.
 */
import {
  ApisApi,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
  type V1Condition,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1PodTemplateSpec
} from "@kubernetes/client-node"
import { Duration, Effect, Stream } from "effect"
import { ProviderError, type ProviderReason, RuntimeStartError } from "../../schema/errors.ts"
import { kubeCall, kubeCallUnlessGone } from "./apiCall.ts"
import { podTroubleOf } from "./startErrors.ts"
import { type ObjectKind, POD, watchState } from "./watchState.ts"

export const SANDBOX: ObjectKind = { apiVersion: "agents.x-k8s.io/v1alpha1", kind: "Sandbox", plural: "sandboxes" }
export const SANDBOX_CLAIM: ObjectKind = {
  apiVersion: "extensions.agents.x-k8s.io/v1alpha1",
  kind: "SandboxClaim",
  plural: "sandboxclaims"
}

interface SandboxObject extends KubernetesObject {
  readonly spec?: { readonly replicas?: number; readonly volumeClaimTemplates?: ReadonlyArray<V1PersistentVolumeClaim> }
  readonly status?: {
    readonly podIPs?: ReadonlyArray<string>
    readonly serviceFQDN?: string
    readonly conditions?: ReadonlyArray<V1Condition>
  }
}

interface ClaimObject extends KubernetesObject {
  readonly status?: { readonly sandbox?: { readonly name?: string }; readonly conditions?: ReadonlyArray<V1Condition> }
}

/** Which agent-sandbox APIs the cluster serves. */
export interface AgentSandboxSupport {
  /** `agents.x-k8s.io/v1alpha1` Sandbox. */
  readonly sandboxes: boolean
  /** `extensions.agents.x-k8s.io/v1alpha1` SandboxClaim, SandboxTemplate, SandboxWarmPool. */
  readonly claims: boolean
  /**
   * The versions the cluster serves of each group, whichever they are: a cluster that has dropped
   * the deprecated v1alpha1 still has agent-sandbox installed, which `auto` must not read as absent.
   */
  readonly versions: { readonly sandboxes: ReadonlyArray<string>; readonly claims: ReadonlyArray<string> }
}

/** A Sandbox, and the SandboxClaim that holds it when it was claimed. */
export interface SandboxRef {
  readonly namespace: string
  readonly name: string
  readonly claim?: string | undefined
}

/** Where a ready Sandbox's server is reached. */
export interface SandboxEndpoint {
  readonly podName: string
  readonly podIP: string
  /** The headless Service's name, when the Sandbox asked for one (`service: true`). */
  readonly serviceFQDN: string | undefined
}

export interface CreateSandboxOptions {
  readonly name: string
  readonly namespace: string
  /** On the Sandbox (the owner's labels: ownerLease.ts); give the pod its own in `podTemplate.metadata`. */
  readonly labels: Readonly<Record<string, string>>
  readonly podTemplate: V1PodTemplateSpec
  readonly volumeClaimTemplates?: ReadonlyArray<V1PersistentVolumeClaim> | undefined
  /** When the cluster ends it (Delete policy: the Sandbox goes too); renewed by the owner's heartbeat. */
  readonly shutdownTime?: string | undefined
  /** A headless Service for a stable DNS name. */
  readonly service?: boolean | undefined
  /** Leave it when the scope closes (a session kept alive for a later attach). */
  readonly keep?: boolean | undefined
}

export interface ClaimSandboxOptions {
  readonly name: string
  readonly namespace: string
  readonly templateName: string
  /** The SandboxWarmPool to take from: a pool's name, "default" (any pool of the template) or "none". */
  readonly warmPool?: string | undefined
  readonly labels: Readonly<Record<string, string>>
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly shutdownTime?: string | undefined
  /** How long to wait for the claim to be bound to a Sandbox (default 2 minutes). */
  readonly timeout?: Duration.Input | undefined
  /** Leave it when the scope closes (a session kept alive for a later attach). */
  readonly keep?: boolean | undefined
}

const startError = (message: string) => new RuntimeStartError({ message })

/**
 * The claim controller's Ready=False reasons that no wait will change (extensions/controllers/
 * sandboxclaim_controller.go), each with the refusal it is: the template is missing, its
 * `envVarsInjectionPolicy` (default Disallowed) refuses the claim's env, the claim's pod metadata
 * is refused, the claim expired. Read at once, so a refused claim fails its start now rather than
 * after the bind time-out.
 */
const CLAIM_REFUSALS: ReadonlyMap<string, ProviderReason> = new Map([
  ["TemplateNotFound", "not-found"],
  ["EnvVarsInjectionRejected", "forbidden"],
  ["InvalidMetadata", "invalid"],
  ["ClaimExpired", "invalid"]
])

/** A duration for a message ("2m"). */
const spoken = (duration: Duration.Input) => Duration.format(Duration.fromInputUnsafe(duration))

/** Discovery: which agent-sandbox API groups the cluster serves at v1alpha1. */
export const detect = Effect.fn("detectAgentSandbox")(function*(kc: KubeConfig) {
  const groups = yield* kubeCall("discover API groups", () => kc.makeApiClient(ApisApi).getAPIVersions())
  const serves = (kind: ObjectKind) =>
    groups.groups.some((group) => group.versions.some((version) => version.groupVersion === kind.apiVersion))
  const versionsOf = (kind: ObjectKind) =>
    groups.groups.filter((group) => group.name === kind.apiVersion.split("/")[0]).flatMap((group) =>
      group.versions.map((version) => version.version)
    )
  return {
    sandboxes: serves(SANDBOX),
    claims: serves(SANDBOX_CLAIM),
    versions: { sandboxes: versionsOf(SANDBOX), claims: versionsOf(SANDBOX_CLAIM) }
  } satisfies AgentSandboxSupport
})

const readyCondition = (sandbox: SandboxObject | undefined) =>
  sandbox?.status?.conditions?.find((condition) => condition.type === "Ready")

const describe = (ref: SandboxRef, sandbox: SandboxObject | undefined) => {
  if (sandbox === undefined) return `Sandbox ${ref.namespace}/${ref.name} does not exist`
  const ready = readyCondition(sandbox)
  return ready === undefined
    ? `Sandbox ${ref.namespace}/${ref.name} has no Ready condition yet`
    : `Sandbox ${ref.namespace}/${ref.name} is Ready=${ready.status} ${ready.reason ?? ""}: ${ready.message ?? ""}`
}

type Verdict =
  | { readonly _tag: "Waiting"; readonly why: string }
  | { readonly _tag: "Ready"; readonly endpoint: SandboxEndpoint }
  | { readonly _tag: "Failed"; readonly why: string }

const verdict = (ref: SandboxRef, sandbox: SandboxObject | undefined, pod: V1Pod | undefined): Verdict => {
  const why = describe(ref, sandbox)
  const podIP = sandbox?.status?.podIPs?.[0]
  if (readyCondition(sandbox)?.status === "True" && podIP !== undefined) {
    return { _tag: "Ready", endpoint: { podName: ref.name, podIP, serviceFQDN: sandbox?.status?.serviceFQDN } }
  }
  if (readyCondition(sandbox)?.reason === "SandboxExpired") return { _tag: "Failed", why }
  // The bare-pod runtime's reading of a pod that will not start (startErrors.ts): one text for both
  // modes; one that may pass (no node yet, a failed pull) is waited out, and named if it lasts.
  const trouble = pod === undefined ? undefined : podTroubleOf(pod)
  if (trouble === undefined) return { _tag: "Waiting", why }
  const described = `${why}; pod ${ref.name}: ${trouble.text}`
  return trouble.passing === true ? { _tag: "Waiting", why: described } : { _tag: "Failed", why: described }
}

/**
 * Wait, by watching the Sandbox and its pod, until the Sandbox is Ready with a pod IP.
 * Fails with a RuntimeStartError naming the Sandbox's Ready condition and the pod's reason
 * when the pod cannot start, or after `timeout` (default 5 minutes) with the last state seen.
 */
export const waitReady = Effect.fn("waitSandboxReady")(function*(
  kc: KubeConfig,
  ref: SandboxRef,
  options: { readonly timeout?: Duration.Input | undefined } = {}
) {
  const timeout = options.timeout ?? "5 minutes"
  // For the timeout's message: what the watches showed last.
  let last = `Sandbox ${ref.namespace}/${ref.name}: nothing observed yet`
  const seen = yield* Stream.zipLatest(
    watchState<SandboxObject>(kc, SANDBOX, ref.namespace, ref.name),
    watchState<V1Pod>(kc, POD, ref.namespace, ref.name)
  ).pipe(
    Stream.map(([sandbox, pod]) => verdict(ref, sandbox, pod)),
    Stream.tap((v) => Effect.sync(() => void (last = v._tag === "Waiting" ? v.why : last))),
    Stream.filter((v): v is Exclude<Verdict, { readonly _tag: "Waiting" }> => v._tag !== "Waiting"),
    Stream.runHead,
    Effect.mapError((error) => startError(`Cannot watch Sandbox ${ref.namespace}/${ref.name}: ${error.message}`)),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(startError(`${last} (still not ready after ${spoken(timeout)})`))
    })
  )
  if (seen._tag === "None") return yield* startError(`${last} (the watch ended)`)
  if (seen.value._tag === "Failed") return yield* startError(seen.value.why)
  return seen.value.endpoint
})

/** Wait, by a watch, until the Sandbox's pod no longer exists. */
const waitPodGone = (kc: KubeConfig, ref: SandboxRef, timeout: Duration.Input) =>
  watchState<V1Pod>(kc, POD, ref.namespace, ref.name).pipe(
    Stream.filter((pod) => pod === undefined),
    Stream.runHead,
    Effect.mapError((error) => startError(`Cannot watch pod ${ref.namespace}/${ref.name}: ${error.message}`)),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(startError(`pod ${ref.namespace}/${ref.name} still exists after ${spoken(timeout)}`))
    }),
    Effect.asVoid
  )

/** Delete a Sandbox (or the claim holding it) and wait until its pod is gone. PVCs stay (workspaces). */
export const remove = Effect.fn("removeSandbox")(function*(kc: KubeConfig, ref: SandboxRef) {
  const api = KubernetesObjectApi.makeApiClient(kc)
  const [kind, name] = ref.claim === undefined ? [SANDBOX, ref.name] : [SANDBOX_CLAIM, ref.claim]
  yield* kubeCallUnlessGone(
    `delete ${kind.kind} ${ref.namespace}/${name}`,
    () => api.delete({ apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name, namespace: ref.namespace } })
  ).pipe(
    Effect.mapError((error) => startError(error.message))
  )
  yield* waitPodGone(kc, ref, "2 minutes")
})

/** Create with `create`; unless `keep`, `remove` the made object when the scope closes (its failure logged). */
const made = <A>(
  create: Effect.Effect<A, RuntimeStartError>,
  removal: () => Effect.Effect<void, RuntimeStartError>,
  keep: boolean | undefined
) =>
  keep === true
    ? create
    : Effect.acquireRelease(create, () => removal().pipe(Effect.catch((error) => Effect.logWarning(error.message))))

/** Create a Sandbox, removed when the scope closes (unless `keep`). Returns once created; `waitReady` waits for its pod. */
export const createSandbox = Effect.fn("createSandbox")(function*(kc: KubeConfig, options: CreateSandboxOptions) {
  const api = KubernetesObjectApi.makeApiClient(kc)
  const ref: SandboxRef = { namespace: options.namespace, name: options.name }
  const body = {
    apiVersion: SANDBOX.apiVersion,
    kind: SANDBOX.kind,
    metadata: { name: options.name, namespace: options.namespace, labels: { ...options.labels } },
    spec: {
      podTemplate: options.podTemplate,
      replicas: 1,
      ...(options.volumeClaimTemplates === undefined ? {} : { volumeClaimTemplates: options.volumeClaimTemplates }),
      ...(options.shutdownTime === undefined ? {} : { shutdownTime: options.shutdownTime, shutdownPolicy: "Delete" }),
      ...(options.service === undefined ? {} : { service: options.service })
    }
  }
  yield* made(
    kubeCall(`create Sandbox ${options.namespace}/${options.name}`, () => api.create(body)).pipe(
      Effect.mapError((error) => startError(error.message))
    ),
    () => remove(kc, ref),
    options.keep
  )
  return ref
})

/**
 * Claim a Sandbox from a template (a ready one from its warm pool when there is one), released
 * with the scope (unless `keep`). Returns once the claim names its Sandbox; `waitReady` waits for its pod.
 */
export const claimSandbox = Effect.fn("claimSandbox")(function*(kc: KubeConfig, options: ClaimSandboxOptions) {
  const api = KubernetesObjectApi.makeApiClient(kc)
  const { namespace, name } = options
  const body = {
    apiVersion: SANDBOX_CLAIM.apiVersion,
    kind: SANDBOX_CLAIM.kind,
    metadata: { name, namespace, labels: { ...options.labels } },
    spec: {
      sandboxTemplateRef: { name: options.templateName },
      ...(options.warmPool === undefined ? {} : { warmpool: options.warmPool }),
      ...(options.env === undefined
        ? {}
        : { env: Object.entries(options.env).map(([key, value]) => ({ name: key, value })) }),
      ...(options.shutdownTime === undefined
        ? {}
        : { lifecycle: { shutdownTime: options.shutdownTime, shutdownPolicy: "Delete" } })
    }
  }
  const released = { ref: { namespace, name, claim: name } as SandboxRef }
  yield* made(
    kubeCall(`create SandboxClaim ${namespace}/${name}`, () => api.create(body)).pipe(
      Effect.mapError((error) => startError(error.message))
    ),
    () => remove(kc, released.ref),
    options.keep
  )
  const timeout = options.timeout ?? "2 minutes"
  const bound = yield* watchState<ClaimObject>(kc, SANDBOX_CLAIM, namespace, name).pipe(
    Stream.map((claim) => {
      const sandbox = claim?.status?.sandbox?.name
      const ready = claim?.status?.conditions?.find((c) => c.type === "Ready")
      if (sandbox !== undefined) return { _tag: "Bound" as const, sandbox }
      if (ready?.reason !== undefined && CLAIM_REFUSALS.has(ready.reason)) {
        return { _tag: "Refused" as const, reason: ready.reason, why: `${ready.reason}: ${ready.message ?? ""}` }
      }
      return undefined
    }),
    Stream.filter((outcome) => outcome !== undefined),
    Stream.runHead,
    Effect.mapError((error) => startError(`Cannot watch SandboxClaim ${namespace}/${name}: ${error.message}`)),
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          startError(`SandboxClaim ${namespace}/${name} was not bound to a Sandbox within ${spoken(timeout)}`)
        )
    })
  )
  if (bound._tag === "None") return yield* startError(`SandboxClaim ${namespace}/${name}: the watch ended`)
  if (bound.value._tag === "Refused") {
    const message = `SandboxClaim ${namespace}/${name} cannot be bound: ${bound.value.why}`
    return yield* new RuntimeStartError({
      message,
      reason: "provider",
      provider: new ProviderError({
        provider: "Kubernetes",
        operation: `claim a Sandbox from SandboxTemplate ${options.templateName}`,
        reason: CLAIM_REFUSALS.get(bound.value.reason)!,
        message
      })
    })
  }
  released.ref = { namespace, name: bound.value.sandbox, claim: name }
  return released.ref
})

/** Set the Sandbox's `replicas` (0 or 1): the controller deletes or creates its pod. */
const setReplicas = (kc: KubeConfig, ref: SandboxRef, replicas: 0 | 1) =>
  kubeCall(
    `set replicas ${replicas} on Sandbox ${ref.namespace}/${ref.name}`,
    () =>
      KubernetesObjectApi.makeApiClient(kc).patch(
        {
          apiVersion: SANDBOX.apiVersion,
          kind: SANDBOX.kind,
          metadata: { name: ref.name, namespace: ref.namespace },
          spec: { replicas }
        },
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch
      )
  ).pipe(
    Effect.mapError((error) => startError(error.message))
  )

/** Suspend: `replicas: 0`, then wait until the pod is gone (the PVCs stay). */
export const suspend = Effect.fn("suspendSandbox")(function*(kc: KubeConfig, ref: SandboxRef) {
  yield* setReplicas(kc, ref, 0)
  yield* waitPodGone(kc, ref, "2 minutes")
})

/** Resume: `replicas: 1`, then wait until it is ready again. */
export const resume = Effect.fn("resumeSandbox")(function*(
  kc: KubeConfig,
  ref: SandboxRef,
  options: { readonly timeout?: Duration.Input | undefined } = {}
) {
  yield* setReplicas(kc, ref, 1)
  return yield* waitReady(kc, ref, options)
})
