/**
 * Shared set-up of the KubernetesRuntime tests: a stand-in cluster (standin/) for the file, a
 * KubeConfig loaded from the kubeconfig file it writes (the runtime sees only client-node), the
 * runtime on the tools image (built on the local engine, which the stand-in "pulls" from), and
 * the end-of-test check that nothing of a session is left: no object with its labels, no
 * container or volume of the stand-in.
 */
import { assert } from "@effect/vitest"
import { CoreV1Api, KubeConfig, NetworkingV1Api, type V1Pod } from "@kubernetes/client-node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { KubernetesRuntime, type KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { toolsImage } from "../docker/infra.ts"
import { leftovers } from "./standin/docker.ts"
import { type StandIn, type StandInOptions, startStandIn } from "./standin/server.ts"

export const namespace = "default"

/** A fresh session id starting with `prefix` (a DNS label, as the runtime requires). */
export const sessionIdOf = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`

/** A stand-in for the enclosing `describe`, started before its tests and closed after them. */
export const useStandIn = (options: StandInOptions & { readonly timeoutMs?: number } = {}) => {
  const cluster = {} as { standIn: StandIn; kubeConfig: KubeConfig; image: string }
  beforeAll(async () => {
    cluster.image = toolsImage()
    cluster.standIn = await startStandIn(options)
    const kubeConfig = new KubeConfig()
    kubeConfig.loadFromFile(cluster.standIn.kubeconfigPath)
    cluster.kubeConfig = kubeConfig
  }, options.timeoutMs ?? 120_000)
  afterAll(() => cluster.standIn?.close())
  return cluster
}

/** A KubernetesRuntime layer on the stand-in, on the tools image. */
export const standInLayer = (
  cluster: { readonly kubeConfig: KubeConfig; readonly image: string },
  options: KubernetesRuntimeOptions = {}
) => KubernetesRuntime.layer({ kubeConfig: cluster.kubeConfig, baseImage: cluster.image, ...options })

const names = (list: { items: ReadonlyArray<{ metadata?: { name?: string } }> }) =>
  list.items.map((item) => item.metadata?.name)

/** The names of every object carrying the session's labels, by kind (empty lists: nothing left). */
export const sessionObjects = (kubeConfig: KubeConfig, sessionId: string, inNamespace = namespace) =>
  Effect.promise(async () => {
    const core = kubeConfig.makeApiClient(CoreV1Api)
    const networking = kubeConfig.makeApiClient(NetworkingV1Api)
    const labelSelector = `effect-sandbox.session=${sessionId}`
    return {
      pods: names(await core.listNamespacedPod({ namespace: inNamespace, labelSelector })),
      services: names(await core.listNamespacedService({ namespace: inNamespace, labelSelector })),
      secrets: names(await core.listNamespacedSecret({ namespace: inNamespace, labelSelector })),
      ingresses: names(await networking.listNamespacedIngress({ namespace: inNamespace, labelSelector })),
      claims: names(await core.listNamespacedPersistentVolumeClaim({ namespace: inNamespace, labelSelector }))
    }
  })

/** `sessionObjects` of a session that left nothing. */
export const noObjects: Readonly<Record<"pods" | "services" | "secrets" | "ingresses" | "claims", Array<string>>> = {
  pods: [],
  services: [],
  secrets: [],
  ingresses: [],
  claims: []
}

/**
 * Assert that `objects` (a `sessionObjects`) comes to show nothing left, waiting for it: a deleted
 * PVC stays listed, terminating, until the controller manager's pvc-protection controller sees no
 * pod using it and drops its finalizer, which on a busy real cluster lags the delete. What is still
 * there after 60 s is a leak.
 */
export const assertObjectsGone = (objects: ReturnType<typeof sessionObjects>) =>
  Effect.gen(function*() {
    let left = yield* objects
    for (let waited = 0; waited < 60_000 && Object.values(left).some((names) => names.length > 0); waited += 250) {
      yield* Effect.sleep("250 millis")
      left = yield* objects
    }
    assert.deepStrictEqual(left, noObjects)
  })

/** Assert the stand-in has no container (and, with `volumes`, no volume) left. */
export const assertEngineClean = (standIn: StandIn, volumes = true) =>
  Effect.promise(async () => {
    const left = await leftovers(standIn.instance)
    assert.deepStrictEqual(left.containers, [], "containers left on the engine")
    if (volumes) assert.deepStrictEqual(left.volumes, [], "volumes left on the engine")
  })

/** Nothing of `sessionId` is left: no object with its labels, no container or volume of the stand-in. */
export const assertNothingLeft = (
  cluster: { readonly kubeConfig: KubeConfig; readonly standIn: StandIn },
  sessionId: string
) =>
  Effect.gen(function*() {
    assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), noObjects)
    yield* assertEngineClean(cluster.standIn)
  })

/** Whether the session's pod came to show `seen` within 60 s (polled: the pod may not exist yet). */
export const podShows = (kubeConfig: KubeConfig, sessionId: string, seen: (pod: V1Pod) => boolean) =>
  Effect.promise(async () => {
    const core = kubeConfig.makeApiClient(CoreV1Api)
    for (const started = Date.now(); Date.now() - started < 60_000;) {
      const pod = await core.readNamespacedPod({ name: `effect-sandbox-${sessionId}`, namespace }).catch(() =>
        undefined
      )
      if (pod !== undefined && seen(pod)) return true
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return false
  })

/** A pod the scheduler reports Unschedulable, its message including `text`. */
export const unschedulable = (text: string) => (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.reason === "Unschedulable" && c.message?.includes(text) === true) === true

/** A pod whose image pull failed (the kubelet pulls again after its back-off). */
export const pullFailed = (pod: V1Pod) =>
  ["ErrImagePull", "ImagePullBackOff"].includes(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? "")
