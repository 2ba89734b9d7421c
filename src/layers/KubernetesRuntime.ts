/**
 * KubernetesRuntime: the action server in a pod, through `@kubernetes/client-node` (an optional
 * peer dependency, loaded when a layer is built). Per session, after OpenHands' KubernetesRuntime:
 * a workspace PVC (kept on release unless `deleteWorkspace`), the pod (the runtime image
 * DockerRuntime builds, readiness probe on `/alive`, followed by a watch), a ClusterIP service, an
 * optional ingress, and a Secret with the session key (the pod gets only its digest). The owner
 * reaches the server through a listener on 127.0.0.1 that carries each connection to the pod IP
 * (inside the cluster) or through the API server's port-forward (outside it). Pause deletes the
 * pod and keeps the PVC; resume makes it again: files survive, processes and shell state do not.
 * Each layer (or pool) holds an owner Lease its objects are labelled with, and runs the reaper
 * that removes the objects of owners whose Lease went stale (kubernetes/owner.ts).
 */
import { type Config, Context, Effect, Layer, Redacted } from "effect"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { type InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import type { ProvisionedSandbox, Provisioner, ProvisionStatus } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { toolCapabilities } from "./internal/serverTools.ts"
import { type Kube, kubeCall, kubeCallOrMissing, makeKube } from "./kubernetes/client.ts"
import { DELETE_WORKSPACE_LABEL, type ResourceNames, resourceNames, sessionLabels } from "./kubernetes/labels.ts"
import { type Dialer, localEndpoint, podIpDialer, portForwardDialer } from "./kubernetes/localEndpoint.ts"
import {
  ingressHost,
  KEY_FIELD,
  keySecret,
  type Meta,
  serverIngress,
  serverService,
  workspaceClaim
} from "./kubernetes/manifests.ts"
import { checkKubernetesOptions, connectMode, type KubernetesRuntimeOptions } from "./kubernetes/options.ts"
import { acquireOwnership } from "./kubernetes/owner.ts"
import { podTemplate, SERVER_PORT, WORKSPACE } from "./kubernetes/podSpec.ts"
import { podStopped, waitUntilReady } from "./kubernetes/podWatch.ts"
import { runtimeImage } from "./kubernetes/runtimeImage.ts"
import { createPod, createReleased, deletePod, deletePodOnRelease, ensureClaim } from "./kubernetes/sessionObjects.ts"
import { explainStop } from "./kubernetes/startErrors.ts"

/** The pod of the moment: its IP (undefined while paused), and whether its absence is on purpose. */
interface PodState {
  ip: string | undefined
  paused: boolean
}

/** The dialer of the connection mode: pod IP, or the API server's port-forward. */
const dialerFor = (kube: Kube, options: KubernetesRuntimeOptions, names: ResourceNames, state: PodState): Dialer =>
  connectMode(options.connect) === "direct"
    ? podIpDialer(() => state.ip, SERVER_PORT)
    : portForwardDialer(new kube.k8s.PortForward(kube.config), kube.namespace, () => names.pod, SERVER_PORT)

/**
 * The running pod of a session, reachable: the local endpoint, pause/resume (delete and recreate
 * the pod from `template`; undefined when attached: a pod someone else made is not ours to delete),
 * and the disconnect watch.
 */
const reachPod = Effect.fn("reachPod")(function*(
  kube: Kube,
  options: KubernetesRuntimeOptions,
  names: ResourceNames,
  recreate: (() => Effect.Effect<unknown, RuntimeStartError>) | undefined
) {
  const ready = yield* waitUntilReady(kube, names.pod)
  const state: PodState = { ip: ready.status?.podIP, paused: false }
  const baseUrl = yield* localEndpoint(dialerFor(kube, options, names, state))
  const readPod = kubeCallOrMissing(
    `read pod ${names.pod}`,
    () => kube.core.readNamespacedPod({ name: names.pod, namespace: kube.namespace })
  )
  return {
    baseUrl,
    podIp: state.ip,
    ...(recreate === undefined ? {} : {
      pause: Effect.gen(function*() {
        state.paused = true
        state.ip = undefined
        yield* deletePod(kube, names.pod)
      }),
      resume: Effect.gen(function*() {
        yield* recreate()
        const pod = yield* waitUntilReady(kube, names.pod)
        state.ip = pod.status?.podIP
        state.paused = false
      })
    }),
    disconnect: {
      stopped: podStopped(kube, names.pod, () => state.paused),
      explain: readPod.pipe(
        Effect.map(explainStop),
        Effect.orElseSucceed(() => ({ outOfMemory: false, message: "the pod cannot be read" }))
      )
    }
  }
})

/**
 * Start a session's objects and pod, in the current scope, until the pod is Ready. Each carries
 * the `owner` labels (the layer's Lease's: the reaper removes them once the owner is proven dead) unless
 * the session is kept alive: it outlives its owner on purpose, so nothing may reap it.
 */
const startSession = (
  kube: Kube,
  options: KubernetesRuntimeOptions,
  owner: Readonly<Record<string, string>>,
  sandbox: SandboxConfig,
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const sessionId = options.sessionId ?? randomUUID()
    const names = resourceNames(sessionId)
    const kept = sandbox.keepRuntimeAlive
    const labels = sessionLabels({ sessionId, owner: kept ? undefined : owner, extra: options.labels })
    const meta = (name: string): Meta => ({ name, labels, annotations: options.annotations ?? {} })
    const image = yield* runtimeImage(options, sandbox, onStatus)
    const key = randomBytes(24).toString("base64url")
    const template = podTemplate({
      sessionId,
      image,
      labels,
      annotations: options.annotations ?? {},
      claimName: names.pvc,
      keySha256: createHash("sha256").update(key).digest("hex"),
      options,
      sandbox
    })
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
    const claimMeta = deleteWorkspace
      ? { ...meta(names.pvc), labels: { ...labels, [DELETE_WORKSPACE_LABEL]: "true" } }
      : meta(names.pvc)
    yield* ensureClaim(kube, workspaceClaim(claimMeta, options), deleteWorkspace)
    yield* createPod(kube, names.pod, template)
    yield* deletePodOnRelease(kube, names.pod, kept)
    yield* createReleased(
      `service ${names.service}`,
      () => core.createNamespacedService({ namespace, body: serverService(meta(names.service), labels) }),
      () => core.deleteNamespacedService({ name: names.service, namespace }),
      kept
    )
    const host = options.ingressDomain === undefined ? undefined : ingressHost(sessionId, options.ingressDomain)
    if (host !== undefined) {
      yield* createReleased(
        `ingress ${names.ingress}`,
        () =>
          networking.createNamespacedIngress({
            namespace,
            body: serverIngress(meta(names.ingress), host, names.service, options.ingressTlsSecret)
          }),
        () => networking.deleteNamespacedIngress({ name: names.ingress, namespace }),
        kept
      )
    }
    const reached = yield* reachPod(kube, options, names, () => createPod(kube, names.pod, template))
    return {
      id: sessionId,
      baseUrl: reached.baseUrl,
      sessionApiKey: Redacted.make(key),
      workspace: WORKSPACE,
      urls: {
        service: `http://${names.service}.${namespace}.svc:${SERVER_PORT}`,
        ...(host === undefined
          ? {}
          : { ingress: `${options.ingressTlsSecret === undefined ? "http" : "https"}://${host}` })
      },
      capabilities: toolCapabilities(options, { pause: true }),
      aliveTimeout: "60 seconds",
      startFailure: reached.disconnect.stopped.pipe(
        Effect.andThen(reached.disconnect.explain),
        Effect.flatMap((why) =>
          Effect.fail(
            new RuntimeStartError({
              message: `The pod ${names.pod} stopped before its action server answered: ${why?.message ?? "unknown"}`
            })
          )
        )
      ),
      ...(reached.pause === undefined ? {} : { pause: reached.pause, resume: reached.resume }),
      disconnect: reached.disconnect
    } satisfies ProvisionedSandbox
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
    const lease = yield* acquireOwnership(kube, options.ownerLease)
    return {
      kind: "kubernetes",
      provision: (onStatus) => startSession(kube, options, lease.labels, sandbox, onStatus)
    } satisfies Provisioner
  })

/** What `attach` needs: the session, the cluster, how to reach it, and the tools it was started with. */
export type KubernetesAttachOptions =
  & Pick<
    KubernetesRuntimeOptions,
    "kubeConfig" | "namespace" | "connect" | "ipython" | "browser" | "mcp" | "sandbox" | "schedules" | "whilePaused"
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
          const reached = yield* reachPod(kube, options, names, undefined)
          return {
            id: options.sessionId,
            baseUrl: reached.baseUrl,
            sessionApiKey: Redacted.make(Buffer.from(encoded, "base64").toString("utf8")),
            workspace: WORKSPACE,
            capabilities: toolCapabilities(options, { pause: false }),
            disconnect: reached.disconnect
          } satisfies ProvisionedSandbox
        })
    } satisfies Provisioner
  })

/** Warm pods waiting for a runtime. */
export class KubernetesSandboxPool extends Context.Service<KubernetesSandboxPool, ProvisionedPool>()(
  "effect-sandbox/KubernetesSandboxPool"
) {}

type LayerError = RuntimeStartError | InvalidOptionsError | Config.ConfigError

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

  /** A runtime on the running pod of session `sessionId` (kept alive by its starter); release leaves it running. */
  attach: (options: KubernetesAttachOptions): Layer.Layer<Runtime, LayerError> =>
    provisionedLayer(options, attachProvisioner(options))
} as const
