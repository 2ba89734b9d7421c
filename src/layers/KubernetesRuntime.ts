/**
 * KubernetesRuntime: the action server in a pod, through `@kubernetes/client-node` (an optional
 * peer dependency, loaded when a layer is built). Per session, after OpenHands' KubernetesRuntime:
 * a workspace PVC (kept on release unless `deleteWorkspace`), the pod (the runtime image
 * DockerRuntime builds, readiness probe on `/alive`, followed by a watch), a ClusterIP service, an
 * optional ingress, and a Secret with the session key (the pod gets only its digest). The owner
 * reaches the server through a listener on 127.0.0.1 that carries each connection to the pod IP
 * (inside the cluster) or through the API server's port-forward (outside it); with `vscode: true`
 * a second such listener carries VS Code's port (`info.urls.vscode`). Pause deletes the
 * pod and keeps the PVC; resume makes it again: files survive, processes and shell state do not.
 * In agentSandbox mode (`mode`, or `auto` on a cluster serving the CRDs) the same pod template
 * runs in an agent-sandbox `Sandbox`, or in one claimed on `warmPoolTemplate`
 * (kubernetes/sandboxSession.ts): pause is `replicas: 0`, and the cluster expires it when the
 * owner's heartbeat stops. Each layer (or pool) holds an owner Lease its objects are labelled
 * with, and runs the reaper that removes the objects of owners whose Lease went stale
 * (kubernetes/owner.ts).
 */
import type { V1PodTemplateSpec } from "@kubernetes/client-node"
import { type Config, Context, Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { type InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigOr } from "../schema/SandboxConfig.ts"
import type { ProvisionedSandbox, Provisioner, ProvisionStatus } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { toolCapabilities, vscodeUrls } from "./internal/serverTools.ts"
import { type Kube, kubeCall, makeKube } from "./kubernetes/client.ts"
import { DELETE_WORKSPACE_LABEL, resourceNames, sessionLabels } from "./kubernetes/labels.ts"
import {
  ingressHosts,
  KEY_FIELD,
  keySecret,
  type Meta,
  serverIngress,
  serverService,
  workspaceClaim
} from "./kubernetes/manifests.ts"
import { checkKubernetesOptions, type KubeManifest, type KubernetesRuntimeOptions } from "./kubernetes/options.ts"
import { acquireOwnership } from "./kubernetes/owner.ts"
import type { KubeOwnerLease } from "./kubernetes/ownerLease.ts"
import { podTemplate, SERVER_PORT, WORKSPACE, WORKSPACE_VOLUME } from "./kubernetes/podSpec.ts"
import { waitUntilReady } from "./kubernetes/podWatch.ts"
import { type PodLifecycle, reachPod } from "./kubernetes/reach.ts"
import { runtimeImage } from "./kubernetes/runtimeImage.ts"
import { createPod, createReleased, deletePod, deletePodOnRelease, ensureClaim } from "./kubernetes/sessionObjects.ts"

/** How the bare-pod mode waits for its pod, and pauses it: delete it, then make it again from `template`. */
const barePodLifecycle = (kube: Kube, name: string, template: V1PodTemplateSpec): PodLifecycle => {
  const ready = waitUntilReady(kube, name).pipe(Effect.map((pod) => pod.status?.podIP))
  return { ready, pause: deletePod(kube, name), resume: createPod(kube, name, template).pipe(Effect.andThen(ready)) }
}

/** The pod mode's own objects: the workspace PVC (kept unless `deleteWorkspace`) and the pod, deleted on release. */
const barePod = Effect.fn("barePod")(function*(
  kube: Kube,
  options: KubernetesRuntimeOptions,
  input: { readonly name: string; readonly template: V1PodTemplateSpec; readonly workspace: Meta },
  deleteWorkspace: boolean,
  kept: boolean
) {
  yield* ensureClaim(kube, workspaceClaim(input.workspace, options), deleteWorkspace)
  yield* createPod(kube, input.name, input.template)
  yield* deletePodOnRelease(kube, input.name, kept)
  return { podName: input.name, lifecycle: barePodLifecycle(kube, input.name, input.template) }
})

/** agentSandbox mode's module (loaded only in that mode: it imports client-node), or undefined for bare pods. */
type SandboxMode = typeof import("./kubernetes/sandboxSession.ts") | undefined

/**
 * Start a session's objects and pod, in the current scope, until the pod is Ready: a bare pod, a
 * Sandbox of its own, or one claimed from `warmPoolTemplate`. Each object carries the owner
 * labels (the layer's Lease's: the reaper removes them once the owner is proven dead) unless the
 * session is kept alive: it outlives its owner on purpose, so nothing may reap or expire it.
 */
const startSession = (
  kube: Kube,
  options: KubernetesRuntimeOptions,
  lease: KubeOwnerLease,
  sandboxes: SandboxMode,
  sandbox: SandboxConfig,
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const sessionId = options.sessionId ?? randomUUID()
    const names = resourceNames(sessionId)
    const kept = sandbox.keepRuntimeAlive
    const owner = kept ? undefined : lease
    const labels = sessionLabels({ sessionId, owner: owner?.labels, extra: options.labels })
    const meta = (name: string): Meta => ({ name, labels, annotations: options.annotations ?? {} })
    const key = randomBytes(24).toString("base64url")
    const keySha256 = createHash("sha256").update(key).digest("hex")
    const { core, networking, namespace } = kube
    // The key Secret first: it exists as long as a session of this id does, so a second start of a
    // live session fails here, before it could touch that session's PVC.
    yield* createReleased(
      `Secret ${names.keySecret}`,
      () => core.createNamespacedSecret({ namespace, body: keySecret(meta(names.keySecret), key) }),
      () => core.deleteNamespacedSecret({ name: names.keySecret, namespace }),
      kept
    )
    const deleteWorkspace = options.deleteWorkspace === true && !kept
    // Labelled so that the reaper deletes it too when the owner dies before its release.
    const workspace = deleteWorkspace
      ? { ...meta(names.pvc), labels: { ...labels, [DELETE_WORKSPACE_LABEL]: "true" } }
      : meta(names.pvc)
    const claimed = sandboxes !== undefined && options.warmPoolTemplate !== undefined
    const podOf = (claimName: string | undefined) =>
      Effect.map(runtimeImage(options, sandbox, onStatus), (image) =>
        podTemplate({
          sessionId,
          image,
          labels,
          annotations: options.annotations ?? {},
          claimName,
          keySha256,
          options,
          sandbox
        }))
    const started = sandboxes === undefined
      ? yield* barePod(
        kube,
        options,
        { name: names.pod, template: yield* podOf(names.pvc), workspace },
        deleteWorkspace,
        kept
      )
      : claimed
      ? yield* sandboxes.claimedSandbox({
        kube,
        name: names.pod,
        labels,
        templateName: options.warmPoolTemplate!,
        warmPool: options.warmPool,
        keySha256,
        deleteWorkspace,
        lease: owner,
        vscode: options.vscode === true
      })
      : yield* sandboxes.ownSandbox({
        kube,
        name: names.pod,
        labels,
        podTemplate: yield* podOf(undefined),
        workspace: workspaceClaim(workspace, options),
        deleteWorkspace,
        lease: owner
      })
    // A claimed Sandbox's pod carries the template's labels, not ours: no service of ours can select it.
    if (!claimed) {
      yield* createReleased(
        `service ${names.service}`,
        () =>
          core.createNamespacedService({
            namespace,
            body: serverService(meta(names.service), labels, options.vscode === true)
          }),
        () => core.deleteNamespacedService({ name: names.service, namespace }),
        kept
      )
    }
    const hosts = options.ingressDomain === undefined
      ? undefined
      : ingressHosts(sessionId, options.ingressDomain, options.vscode === true)
    const scheme = options.ingressTlsSecret === undefined ? "http" : "https"
    if (hosts !== undefined) {
      yield* createReleased(
        `ingress ${names.ingress}`,
        () =>
          networking.createNamespacedIngress({
            namespace,
            body: serverIngress(meta(names.ingress), hosts, names.service, options.ingressTlsSecret)
          }),
        () => networking.deleteNamespacedIngress({ name: names.ingress, namespace }),
        kept
      )
    }
    const reached = yield* reachPod(kube, options, started.podName, started.lifecycle)
    const sessionApiKey = Redacted.make(key)
    return {
      id: sessionId,
      baseUrl: reached.baseUrl,
      sessionApiKey,
      workspace: WORKSPACE,
      urls: {
        ...(claimed ? {} : { service: `http://${names.service}.${namespace}.svc:${SERVER_PORT}` }),
        ...(hosts === undefined ? {} : { ingress: `${scheme}://${hosts.server}` })
      },
      capabilities: toolCapabilities(options, { pause: true }),
      aliveTimeout: "60 seconds",
      startFailure: reached.disconnect.stopped.pipe(
        Effect.andThen(reached.disconnect.explain),
        Effect.flatMap((why) =>
          Effect.fail(
            new RuntimeStartError({
              message: `The pod ${started.podName} stopped before its action server answered: ${
                why?.message ?? "unknown"
              }`
            })
          )
        )
      ),
      ...(reached.pause === undefined ? {} : { pause: reached.pause, resume: reached.resume }),
      disconnect: reached.disconnect,
      // VS Code on its own local endpoint for the owner, and on the ingress's `vscode-` host for anyone with the token.
      handOver: vscodeUrls(
        options,
        { baseUrl: reached.baseUrl, sessionApiKey, workspace: WORKSPACE },
        reached.vscodeBase
      ).pipe(Effect.map(withIngressIde(hosts?.vscode === undefined ? undefined : `${scheme}://${hosts.vscode}`)))
    } satisfies ProvisionedSandbox
  })

/**
 * `urls` with `vscodeIngress` beside `vscode` when the ingress has VS Code's host: the same IDE,
 * token and folder, opened from wherever the ingress is reachable (OpenHands' `vscode_url` there).
 */
const withIngressIde = (base: string | undefined) => (urls: Record<string, string>): Record<string, string> =>
  base === undefined || urls["vscode"] === undefined
    ? urls
    : { ...urls, vscodeIngress: `${base}/${new URL(urls["vscode"]).search}` }

/** agentSandbox mode's module when this layer uses it (`mode`, discovery: sandboxSession.ts), else undefined. */
const sandboxMode = Effect.fn("sandboxMode")(function*(kube: Kube, options: KubernetesRuntimeOptions) {
  if ((options.mode ?? "pod") === "pod" && options.warmPoolTemplate === undefined) return undefined
  const module = yield* Effect.promise(() => import("./kubernetes/sandboxSession.ts"))
  return (yield* module.usesSandboxes(kube, options)) ? module : undefined
})

/**
 * The Kubernetes provisioner for one layer or pool: options checked and the cluster connected
 * first, then the owner's Lease (acquired before any session, so released after all of them) and
 * the reaper of dead owners' objects.
 */
const kubernetesProvisioner = (options: KubernetesRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkKubernetesOptions(options)
    const kube = yield* makeKube(options)
    const sandboxes = yield* sandboxMode(kube, options)
    const lease = yield* acquireOwnership(kube, options.ownerLease)
    return {
      kind: "kubernetes",
      provision: (onStatus) => startSession(kube, options, lease, sandboxes, sandbox, onStatus)
    } satisfies Provisioner
  })

type LayerError = RuntimeStartError | InvalidOptionsError | Config.ConfigError

/**
 * The `SandboxTemplate` (extensions.agents.x-k8s.io/v1alpha1) named `name` whose Sandboxes run the
 * server `options` describe, for the cluster operator to apply and `warmPoolTemplate` to name: the
 * pod mode's pod template, its workspace a volumeClaimTemplate. Its pod holds the digest of a key
 * nobody has, so a Sandbox made from it serves no one until a claim's env gives it a session's.
 */
const sandboxTemplate = (
  name: string,
  options: KubernetesRuntimeOptions = {}
): Effect.Effect<KubeManifest, LayerError> =>
  Effect.gen(function*() {
    yield* checkKubernetesOptions({ ...options, sessionId: name })
    const sandbox = yield* sandboxConfigOr(options.sandbox)
    const image = yield* runtimeImage(options, sandbox, () => Effect.void)
    const labels = { ...options.labels }
    const annotations = { ...options.annotations }
    const template = podTemplate({
      sessionId: name,
      image,
      labels,
      annotations,
      claimName: undefined,
      keySha256: undefined,
      options,
      sandbox
    })
    return {
      apiVersion: "extensions.agents.x-k8s.io/v1alpha1",
      kind: "SandboxTemplate",
      metadata: { name, labels, annotations },
      spec: {
        podTemplate: template,
        volumeClaimTemplates: [workspaceClaim({ name: WORKSPACE_VOLUME, labels, annotations }, options)]
      }
    }
  })

/** What `attach` needs: the session, the cluster, how to reach it, and the tools it was started with. */
export type KubernetesAttachOptions =
  & Pick<
    KubernetesRuntimeOptions,
    | "kubeConfig"
    | "namespace"
    | "connect"
    | "ipython"
    | "browser"
    | "mcp"
    | "vscode"
    | "sandbox"
    | "schedules"
    | "whilePaused"
  >
  & { readonly sessionId: string }

/** A provisioner that reaches a running session's pod (key from its Secret) and leaves it running. */
const attachProvisioner = (options: KubernetesAttachOptions) => (_sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkKubernetesOptions(options)
    const kube = yield* makeKube(options)
    const names = resourceNames(options.sessionId)
    return {
      kind: "kubernetes",
      provision: () =>
        Effect.gen(function*() {
          const secret = yield* kubeCall(
            `read Secret ${names.keySecret} (the session key of ${options.sessionId})`,
            () => kube.core.readNamespacedSecret({ name: names.keySecret, namespace: kube.namespace })
          )
          const encoded = secret.data?.[KEY_FIELD]
          if (encoded === undefined) {
            return yield* new RuntimeStartError({ message: `Secret ${names.keySecret} holds no ${KEY_FIELD}` })
          }
          const ready = waitUntilReady(kube, names.pod).pipe(Effect.map((pod) => pod.status?.podIP))
          const reached = yield* reachPod(kube, options, names.pod, { ready })
          const sessionApiKey = Redacted.make(Buffer.from(encoded, "base64").toString("utf8"))
          return {
            id: options.sessionId,
            baseUrl: reached.baseUrl,
            sessionApiKey,
            workspace: WORKSPACE,
            capabilities: toolCapabilities(options, { pause: false }),
            disconnect: reached.disconnect,
            // Present only if the session was started with the plugin (else its token is null).
            handOver: vscodeUrls(
              options,
              { baseUrl: reached.baseUrl, sessionApiKey, workspace: WORKSPACE },
              reached.vscodeBase
            )
          } satisfies ProvisionedSandbox
        })
    } satisfies Provisioner
  })

/** Warm pods waiting for a runtime. */
export class KubernetesSandboxPool extends Context.Service<KubernetesSandboxPool, ProvisionedPool>()(
  "effect-sandbox/KubernetesSandboxPool"
) {}

export const KubernetesRuntime = {
  /** A runtime in a pod of its own; its objects are deleted on release (the PVC only with `deleteWorkspace`). */
  layer: (options: KubernetesRuntimeOptions = {}): Layer.Layer<Runtime, LayerError> =>
    provisionedLayer(options, kubernetesProvisioner(options)),

  /** Keep `warmPods` pods ready in the background, for `layerWarm`; each taken pod is its runtime's. */
  layerPool: (
    options: KubernetesRuntimeOptions & { readonly warmPods: number }
  ): Layer.Layer<KubernetesSandboxPool, LayerError> => {
    // Pool members get fresh session ids; a fixed one would name one pod only.
    const { sessionId: _, warmPods, ...shared } = options
    return provisionedPoolLayer(
      KubernetesSandboxPool,
      warmPods,
      "Kubernetes pod",
      shared,
      kubernetesProvisioner(shared)
    )
  },

  /** A runtime on a pod taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, KubernetesSandboxPool> => warmLayer(KubernetesSandboxPool, Effect.succeed),

  /** The SandboxTemplate for `warmPoolTemplate` (the operator applies it): the runtime's pod, locked until claimed. */
  sandboxTemplate,

  /** A runtime on the running pod of session `sessionId` (kept alive by its starter); release leaves it running. */
  attach: (options: KubernetesAttachOptions): Layer.Layer<Runtime, LayerError> =>
    provisionedLayer(options, attachProvisioner(options))
} as const
