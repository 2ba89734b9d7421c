/**
 * A session in agentSandbox mode: the pod comes from an agent-sandbox `Sandbox` (agentSandbox.ts)
 * instead of being made bare. Either a Sandbox of the session's own, from the very pod template
 * the pod mode runs, its workspace a `volumeClaimTemplates` PVC; or, with `warmPoolTemplate`, a
 * `SandboxClaim` on the operator's SandboxTemplate, the session key's digest in the claim's `env`.
 * Either way the owner's heartbeat keeps its `shutdownTime` ahead (ownerLease.ts), so the cluster
 * removes it when the owner dies; pause is `replicas: 0`, resume `replicas: 1`.
 *
 * A warm pool's pod was started before the session key existed: its server checks another digest
 * (a SandboxTemplate's pod holds a key nobody has: podSpec.ts), and nothing a cluster offers
 * changes a running container's environment. So a claim's pod is used only when its env carries
 * the session's digest; a warm one is refused (docs/runtimes/kubernetes.md, "agent-sandbox mode").
 * For the same reason `vscode: true` cannot turn the IDE on in a claimed pod: the template must run
 * it (`KubernetesRuntime.sandboxTemplate(name, { vscode: true })`), else the claim is refused.
 * Loaded by KubernetesRuntime only in this mode: it imports client-node.
 */
import type { V1PersistentVolumeClaim, V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node"
import { type Duration, Effect } from "effect"
import {
  claimSandbox,
  createSandbox,
  detect,
  remove,
  resume as resumeSandbox,
  type SandboxRef,
  suspend,
  waitReady
} from "../../engines/kubernetes/agentSandbox.ts"
import { type Kube, kubeCall, kubeCallOrMissing } from "../../engines/kubernetes/client.ts"
import { envValue, runsVsCode, WORKSPACE_VOLUME } from "../../engines/kubernetes/podSpec.ts"
import { SESSION_KEY_SHA256_VARIABLE } from "../../executor/childEnv.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { VSCODE_PORT } from "../../serverStart/serverTools.ts"
import type { KubernetesRuntimeOptions } from "./options.ts"
import type { KubeOwnerLease } from "./ownerLease.ts"
import type { PodLifecycle } from "./podLifecycle.ts"
import { deleteClaim, onRelease } from "./sessionObjects.ts"

/**
 * Does this layer make Sandboxes? `pod` never; `agentSandbox` (and any `warmPoolTemplate`) only on
 * a cluster that serves the kinds it needs, else a start error saying so; `auto` when it serves them,
 * and a start error (never bare pods in silence) when it serves agent-sandbox at other versions only.
 */
export const usesSandboxes = Effect.fn("usesSandboxes")(function*(kube: Kube, options: KubernetesRuntimeOptions) {
  const claims = options.warmPoolTemplate !== undefined
  const mode = options.mode ?? (claims ? "agentSandbox" : "pod")
  if (mode === "pod") return false
  const served = yield* detect(kube.config).pipe(
    Effect.mapError((error) => new RuntimeStartError({ message: `Cannot ${error.message}` }))
  )
  const needed = claims
    ? {
      served: served.claims,
      versions: served.versions.claims,
      what: "extensions.agents.x-k8s.io/v1alpha1 SandboxClaims (warmPoolTemplate)"
    }
    : { served: served.sandboxes, versions: served.versions.sandboxes, what: "agents.x-k8s.io/v1alpha1 Sandboxes" }
  if (needed.served) return true
  // Installed at other versions only (v1alpha1 is deprecated): not a cluster without the CRDs.
  if (needed.versions.length > 0) {
    return yield* new RuntimeStartError({
      message: `The cluster serves agent-sandbox at ${
        needed.versions.join(", ")
      } but not ${needed.what}, which mode ${mode} needs: serve v1alpha1 beside v1beta1, or use mode "pod"`
    })
  }
  if (mode === "auto" && !claims) return false
  return yield* new RuntimeStartError({
    message:
      `The cluster does not serve ${needed.what}, which mode ${mode} needs: install agent-sandbox (kubernetes-sigs/agent-sandbox) or use mode "pod"`
  })
})

/** Suspend and resume by `replicas`; `ready` is `waitReady` then `check` on the pod that became ready. */
export const sandboxLifecycle = (
  kube: Kube,
  ref: SandboxRef,
  deadline: Duration.Input,
  check: (podName: string) => Effect.Effect<void, RuntimeStartError>
): PodLifecycle => {
  const checked = (ready: Effect.Effect<{ readonly podName: string; readonly podIP: string }, RuntimeStartError>) =>
    ready.pipe(Effect.tap((endpoint) => check(endpoint.podName)), Effect.map((endpoint) => endpoint.podIP))
  return {
    ready: checked(waitReady(kube.config, ref, { timeout: deadline })),
    pause: suspend(kube.config, ref),
    resume: checked(resumeSandbox(kube.config, ref, { timeout: deadline }))
  }
}

/** The Sandbox the claim `name` was bound to (undefined while it is not, or without the claim). */
export const boundSandbox = (kube: Kube, name: string) =>
  kubeCallOrMissing(
    `read SandboxClaim ${name}`,
    () =>
      kube.config.makeApiClient(kube.k8s.CustomObjectsApi).getNamespacedCustomObject({
        group: "extensions.agents.x-k8s.io",
        version: "v1alpha1",
        namespace: kube.namespace,
        plural: "sandboxclaims",
        name
      }) as Promise<{ readonly status?: { readonly sandbox?: { readonly name?: string } } }>
  ).pipe(Effect.map((claim) => claim?.status?.sandbox?.name))

/** Delete a Sandbox (or the claim holding it) and wait until its pod is gone. */
export const removeSandbox = (kube: Kube, ref: SandboxRef) => remove(kube.config, ref)

export interface OwnSandboxInput {
  readonly kube: Kube
  /** The Sandbox's name (its pod's too): the pod mode's pod name. */
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  /** The pod mode's template, without the workspace volume (the volumeClaimTemplate adds it). */
  readonly podTemplate: V1PodTemplateSpec
  /** The workspace PVC's template; the controller names the PVC `workspace-<name>`. */
  readonly workspace: V1PersistentVolumeClaim
  readonly deleteWorkspace: boolean
  /** The owner's Lease, whose heartbeat keeps `shutdownTime` ahead; undefined when kept alive. */
  readonly lease: KubeOwnerLease | undefined
  /** How long its pod may take to be ready. */
  readonly deadline: Duration.Input
}

/** A Sandbox of the session's own, removed on release (its workspace PVC only with `deleteWorkspace`). */
export const ownSandbox = Effect.fn("ownSandbox")(function*(input: OwnSandboxInput) {
  const { kube, lease } = input
  const pvc = `${WORKSPACE_VOLUME}-${input.name}`
  // Registered first, so it runs after the Sandbox's removal has waited for its pod to let go.
  yield* onRelease(!input.deleteWorkspace, `delete PVC ${pvc}`, deleteClaim(kube, pvc))
  const ref = yield* createSandbox(kube.config, {
    name: input.name,
    namespace: kube.namespace,
    labels: input.labels,
    podTemplate: input.podTemplate,
    volumeClaimTemplates: [{ ...input.workspace, metadata: { ...input.workspace.metadata, name: WORKSPACE_VOLUME } }],
    shutdownTime: lease?.shutdownTime(),
    keep: lease === undefined
  })
  if (lease !== undefined) yield* lease.keepAlive({ kind: "Sandbox", name: ref.name })
  return {
    podName: ref.name,
    workspaceClaim: pvc,
    lifecycle: sandboxLifecycle(kube, ref, input.deadline, () => Effect.void)
  }
})

export interface ClaimedSandboxInput {
  readonly kube: Kube
  /** The claim's name. */
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly templateName: string
  readonly warmPool: string | undefined
  /** The session key's SHA-256 (hex), for the claim's env. */
  readonly keySha256: string
  /** Delete the Sandbox's `workspace-<sandbox>` PVC (the template's volumeClaimTemplate) on release too. */
  readonly deleteWorkspace: boolean
  readonly lease: KubeOwnerLease | undefined
  /** The options ask for VS Code: the template's pod must run it (`runsVsCode`). */
  readonly vscode: boolean
  /** How long its pod may take to be ready. */
  readonly deadline: Duration.Input
}

/**
 * Why the claimed Sandbox's pod cannot be this session's, or undefined: it must check the
 * session's key, and run VS Code when the options ask for it (the template decides, not the claim).
 */
const unfit = (pod: V1Pod, input: ClaimedSandboxInput, sandbox: string) => {
  const given = `SandboxClaim ${input.kube.namespace}/${input.name} was given Sandbox ${sandbox}, whose pod`
  const container = pod.spec?.containers[0]
  if (envValue(container, SESSION_KEY_SHA256_VARIABLE) !== input.keySha256) {
    return `${given} does not check this session's key: a warm pool's pod, started before the key existed, cannot ` +
      `take it (a container's environment is fixed when it starts). Claim with warmPool "none" (the default) to ` +
      `have the Sandbox made from the template with the key's digest in its env`
  }
  if (input.vscode && !runsVsCode(container)) {
    return `${given} does not run VS Code (the server's --plugins vscode and VSCODE_PORT=${VSCODE_PORT}), which the options ` +
      `ask for: the SandboxTemplate ${input.templateName} decides, so write it with ` +
      `KubernetesRuntime.sandboxTemplate(name, { vscode: true })`
  }
  return undefined
}

/**
 * A Sandbox claimed from `templateName`, released with its claim; used only if its pod checks the
 * session's key (and runs VS Code, when asked for: `unfit`).
 */
export const claimedSandbox = Effect.fn("claimedSandbox")(function*(input: ClaimedSandboxInput) {
  const { kube, lease } = input
  // Registered before the claim, so it runs after the claim's removal has waited for the pod.
  const bound = { sandbox: undefined as string | undefined }
  yield* onRelease(
    !input.deleteWorkspace,
    "delete the workspace PVC",
    Effect.suspend(() =>
      bound.sandbox === undefined
        ? Effect.void
        : Effect.asVoid(deleteClaim(kube, `${WORKSPACE_VOLUME}-${bound.sandbox}`))
    )
  )
  const ref = yield* claimSandbox(kube.config, {
    name: input.name,
    namespace: kube.namespace,
    templateName: input.templateName,
    warmPool: input.warmPool ?? "none",
    labels: input.labels,
    env: { [SESSION_KEY_SHA256_VARIABLE]: input.keySha256 },
    shutdownTime: lease?.shutdownTime(),
    keep: lease === undefined
  })
  bound.sandbox = ref.name
  if (lease !== undefined) yield* lease.keepAlive({ kind: "SandboxClaim", name: input.name })
  const serves = (podName: string) =>
    kubeCall(`read pod ${podName}`, () => kube.core.readNamespacedPod({ name: podName, namespace: kube.namespace }))
      .pipe(
        Effect.flatMap((pod) => {
          const why = unfit(pod, input, ref.name)
          return why === undefined ? Effect.void : Effect.fail(new RuntimeStartError({ message: why }))
        })
      )
  return { podName: ref.name, lifecycle: sandboxLifecycle(kube, ref, input.deadline, serves) }
})
