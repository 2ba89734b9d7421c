/**
 * What the lifecycle tests (ownerLease, reaper, agentSandbox) share: a stand-in
 * per test with client-node from its kubeconfig file and the check that nothing
 * is left (no pod in the namespace, no container on the engine), a pod template
 * serving a file over HTTP, and waiting for a state no single watch shows.
 */
import { assert } from "@effect/vitest"
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1PodTemplateSpec } from "@kubernetes/client-node"
import { Effect, type Scope } from "effect"
import { beforeAll } from "vitest"
import { describeDocker, toolsImage } from "../docker/infra.ts"
import { leftovers } from "./standin/docker.ts"
import { type StandIn, standIn, type StandInOptions } from "./standin/server.ts"

export const namespace = "default"

export const kubeConfigOf = (kubeconfigPath: string) => {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigPath)
  return kc
}

/** The tools image, resolved (built when missing) before the tests of `describeCluster` run. */
let image: string | undefined

/** `describe` for tests that run pods on the stand-in: Docker is needed, and the tools image. */
export const describeCluster = (name: string, body: () => void) =>
  describeDocker(name, () => {
    beforeAll(() => {
      image = toolsImage()
    }, 600_000)
    body()
  })

/** The image of the test pods (resolved by `describeCluster`). */
export const podImage = () => image!

/**
 * A pod that serves `text` at `/` on port 8000 (python3's http.server: the tools image, as the
 * base image has no python3), ready by an httpGet probe.
 */
export const servingTemplate = (text: string, labels: Record<string, string> = {}): V1PodTemplateSpec => ({
  metadata: { labels },
  spec: {
    automountServiceAccountToken: false,
    containers: [{
      name: "server",
      image: podImage(),
      command: [
        "sh",
        "-c",
        `mkdir -p /tmp/www && echo ${text} > /tmp/www/index.html && cd /tmp/www && exec python3 -m http.server 8000`
      ],
      readinessProbe: { httpGet: { path: "/", port: 8000 } }
    }]
  }
})

/** Poll `check` every 100 ms for at most `ms` (for states no single watch shows, e.g. a whole list). */
export const eventually = (check: () => Promise<boolean>, ms = 20_000) =>
  Effect.promise(async () => {
    for (const started = Date.now(); Date.now() - started < ms;) {
      if (await check()) return true
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return false
  })

const EXTENSIONS = { group: "extensions.agents.x-k8s.io", version: "v1alpha1", namespace }

/** An agent-sandbox extension object (`sandboxtemplates`, `sandboxwarmpools`) made, deleted when the scope closes. */
export const extensionObject = (
  kc: KubeConfig,
  plural: string,
  body: { readonly metadata: { readonly name: string }; readonly spec: object }
) => {
  const custom = kc.makeApiClient(CustomObjectsApi)
  return Effect.acquireRelease(
    Effect.promise(() => custom.createNamespacedCustomObject({ ...EXTENSIONS, plural, body })),
    () => Effect.promise(() => custom.deleteNamespacedCustomObject({ ...EXTENSIONS, plural, name: body.metadata.name }))
  )
}

/** Whether the SandboxWarmPool `name` had one ready Sandbox within `ms`. */
export const warmPoolReady = (kc: KubeConfig, name: string, ms: number) =>
  eventually(async () => {
    const pool = await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      ...EXTENSIONS,
      plural: "sandboxwarmpools",
      name
    })
    return (pool as { status?: { readyReplicas?: number } }).status?.readyReplicas === 1
  }, ms)

/** Names of the pods in the namespace. */
export const podNames = async (kc: KubeConfig) =>
  (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace })).items.map((pod) => pod.metadata!.name!)

/**
 * Run `body` against a fresh stand-in; once body's scope closed, the namespace must hold no
 * pod and the engine no container or volume of it (whatever body deleted may take a moment to go).
 */
export const onStandIn = <A, E>(
  body: (kc: KubeConfig, cluster: StandIn) => Effect.Effect<A, E, Scope.Scope>,
  options: StandInOptions = {}
) =>
  Effect.scoped(Effect.gen(function*() {
    const cluster = yield* standIn(options)
    const kc = kubeConfigOf(cluster.kubeconfigPath)
    const result = yield* Effect.scoped(body(kc, cluster))
    assert.isTrue(yield* eventually(async () => (await podNames(kc)).length === 0), "pods left behind")
    assert.isTrue(
      yield* eventually(async () => {
        const left = await leftovers(cluster.instance)
        return left.containers.length === 0 && left.volumes.length === 0
      }),
      "containers or volumes left behind"
    )
    return result
  }))
