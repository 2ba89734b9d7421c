/**
 * The cluster as the runtime talks to it: `@kubernetes/client-node` loaded when a layer is built
 * (an optional peer dependency: importing `effect-sandbox/kubernetes` does not load it), its
 * KubeConfig, the namespace, and the API clients. `kubeCall` turns a failed call into a
 * `RuntimeStartError` carrying the API server's own Status message.
 */
import type * as K8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { KubeConfigLike } from "./options.ts"

/** What every Kubernetes module works with. */
export interface Kube {
  readonly k8s: typeof K8s
  readonly config: K8s.KubeConfig
  readonly namespace: string
  readonly core: K8s.CoreV1Api
  readonly networking: K8s.NetworkingV1Api
}

/** The HTTP status of a failed client-node call (undefined for a network error). */
export const statusCode = (error: unknown): number | undefined =>
  typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : undefined

/** The API server's message in a failed call's Status body, else the error's own. */
const messageOf = (error: unknown): string => {
  const body = (error as { body?: unknown }).body
  if (typeof body === "string") {
    try {
      const status = JSON.parse(body) as { message?: unknown }
      if (typeof status.message === "string") return status.message
    } catch {
      // Not a Status object: the error's own message says more.
    }
  }
  return error instanceof Error ? error.message : String(error)
}

/** A client-node call as an Effect; a failure names what was attempted and what the API server said. */
export const kubeCall = <A>(what: string, call: () => Promise<A>): Effect.Effect<A, RuntimeStartError> =>
  Effect.tryPromise({
    try: call,
    catch: (error) => new RuntimeStartError({ message: `Cannot ${what}: ${messageOf(error)}` })
  })

/** Like `kubeCall`, with a 404 as `undefined` (for reads of what may be gone, deletes of what may be). */
export const kubeCallOrMissing = <A>(what: string, call: () => Promise<A>) =>
  Effect.tryPromise({ try: call, catch: (error) => error }).pipe(
    Effect.catch((error) =>
      statusCode(error) === 404
        ? Effect.succeed(undefined)
        : Effect.fail(new RuntimeStartError({ message: `Cannot ${what}: ${messageOf(error)}` }))
    )
  )

/**
 * Load client-node and connect: the given KubeConfig, else `loadFromDefault()`; the namespace given,
 * else the current context's, else `default`.
 */
export const makeKube = Effect.fn("makeKube")(function*(options: {
  readonly kubeConfig?: KubeConfigLike | undefined
  readonly namespace?: string | undefined
}) {
  const k8s = yield* Effect.tryPromise({
    try: () => import("@kubernetes/client-node"),
    catch: (cause) =>
      new RuntimeStartError({
        message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
          ? "KubernetesRuntime needs @kubernetes/client-node, an optional peer dependency: npm install @kubernetes/client-node"
          : `Cannot load @kubernetes/client-node: ${(cause as Error).message}`
      })
  })
  const config = (options.kubeConfig as K8s.KubeConfig | undefined) ?? (yield* Effect.try({
    try: () => {
      const loaded = new k8s.KubeConfig()
      loaded.loadFromDefault()
      return loaded
    },
    catch: (cause) => new RuntimeStartError({ message: `Cannot load the kubeconfig: ${(cause as Error).message}` })
  }))
  if (config.getCurrentCluster() === null) {
    return yield* new RuntimeStartError({
      message:
        "No Kubernetes cluster configured: set KUBECONFIG, write ~/.kube/config, or run in a pod with a service account"
    })
  }
  const namespace = options.namespace ?? config.getContextObject(config.getCurrentContext())?.namespace ?? "default"
  return {
    k8s,
    config,
    namespace,
    core: config.makeApiClient(k8s.CoreV1Api),
    networking: config.makeApiClient(k8s.NetworkingV1Api)
  } satisfies Kube
})
