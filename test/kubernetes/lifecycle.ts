/**
 * What the lifecycle tests (ownerLease, reaper, agentSandbox) share: a stand-in
 * per test with client-node from its kubeconfig file and the check that nothing
 * is left (no pod in the namespace, no container on the engine), a pod template
 * serving a file over HTTP, and waiting for a state no single watch shows.
 */
import { assert } from "@effect/vitest"
import { CoreV1Api, KubeConfig, type V1PodTemplateSpec } from "@kubernetes/client-node"
import { Effect, type Scope } from "effect"
import { leftovers } from "./standin/docker.ts"
import { standIn, type StandInOptions } from "./standin/server.ts"

export const namespace = "default"

export const kubeConfigOf = (kubeconfigPath: string) => {
  const kc = new KubeConfig()
  kc.loadFromFile(kubeconfigPath)
  return kc
}

/**
 * A pod that serves `text` at `/` on port 8000 (python3's http.server: `image` is the tools
 * image, as the base image has no python3), ready by an httpGet probe.
 */
export const servingTemplate = (
  image: string,
  text: string,
  labels: Record<string, string> = {}
): V1PodTemplateSpec => ({
  metadata: { labels },
  spec: {
    automountServiceAccountToken: false,
    containers: [{
      name: "server",
      image,
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

/** Names of the pods in the namespace. */
export const podNames = async (kc: KubeConfig) =>
  (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace })).items.map((pod) => pod.metadata!.name!)

/**
 * Run `body` against a fresh stand-in; once body's scope closed, the namespace must hold no
 * pod and the engine no container of it (whatever body deleted may take a moment to go).
 */
export const onStandIn = <A, E>(
  body: (kc: KubeConfig) => Effect.Effect<A, E, Scope.Scope>,
  options: StandInOptions = {}
) =>
  Effect.scoped(Effect.gen(function*() {
    const cluster = yield* standIn(options)
    const kc = kubeConfigOf(cluster.kubeconfigPath)
    const result = yield* Effect.scoped(body(kc))
    assert.isTrue(yield* eventually(async () => (await podNames(kc)).length === 0), "pods left behind")
    assert.isTrue(
      yield* eventually(async () => (await leftovers(cluster.instance)).containers.length === 0),
      "containers left behind"
    )
    return result
  }))
