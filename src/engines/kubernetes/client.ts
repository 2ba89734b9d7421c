/**
 * The cluster as the runtime talks to it: `@kubernetes/client-node` loaded when a layer is built
 * (an optional peer dependency: importing `effect-sandbox/kubernetes` does not load it), its
 * KubeConfig, the namespace, and the API clients. `kubeCall` turns a failed call into a
 * `RuntimeStartError` carrying the API server's own Status message (read by apiCall.ts).
 */
import type * as K8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { join } from "node:path"
import { ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { type KubeApiError, kubeCall as apiCall, kubeCallUnlessGone, reasonOf } from "./apiCall.ts"
import type { KubeConfigLike } from "./podOptions.ts"

/** What every Kubernetes module works with. */
export interface Kube {
  readonly k8s: typeof K8s
  readonly config: K8s.KubeConfig
  readonly namespace: string
  readonly core: K8s.CoreV1Api
  readonly networking: K8s.NetworkingV1Api
}

/**
 * A failed request as a start error: what was attempted and what the API server said, and the
 * refusal as data (`provider`: its reason from the status).
 */
export const startError = (error: KubeApiError, message = `Cannot ${error.message}`) => {
  return new RuntimeStartError({
    message,
    reason: "provider",
    provider: new ProviderError({
      provider: "Kubernetes",
      operation: error.operation,
      reason: reasonOf(error.status, error.message),
      ...(error.status === undefined ? {} : { status: error.status }),
      message
    })
  })
}

/** A client-node call as an Effect (apiCall.ts); a failure is a RuntimeStartError. */
export const kubeCall = <A>(what: string, call: () => Promise<A>): Effect.Effect<A, RuntimeStartError> =>
  apiCall(what, call).pipe(Effect.mapError(startError))

/** Like `kubeCall`, with a 404 as `undefined` (for reads of what may be gone, deletes of what may be). */
export const kubeCallOrMissing = <A>(what: string, call: () => Promise<A>) =>
  kubeCallUnlessGone(what, call).pipe(Effect.mapError(startError))

/** The pod `name` in the handle's namespace as it is now, or `undefined` when there is none. */
export const readPodOrMissing = (kube: Kube, name: string) =>
  kubeCallOrMissing(`read pod ${name}`, () => kube.core.readNamespacedPod({ name, namespace: kube.namespace }))

/** Where client-node finds the in-cluster service account's token (`loadFromDefault`'s third place). */
const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"

/**
 * Whether `loadFromDefault` found nothing: it then makes up a cluster at http://localhost:8080
 * (`loadFromClusterAndUser({ name: "cluster", server: "http://localhost:8080" }, { name: "user" })`),
 * on which every call fails with "HTTP protocol is not allowed when skipTLSVerify is not set or
 * false", a message about TLS for what is a missing kubeconfig.
 */
const foundNothing = (config: K8s.KubeConfig): boolean => {
  const [cluster, ...others] = config.clusters
  return config.getCurrentContext() === "loaded-context" && others.length === 0 && cluster?.name === "cluster" &&
    cluster.server === "http://localhost:8080" && config.users.length === 1 && config.users[0]?.name === "user"
}

/** The message for `foundNothing`: each place `loadFromDefault` looked, as this process saw it. */
const noKubeconfig = (): string => {
  const home = process.env["HOME"]
  const homeConfig = home === undefined || home === "" ? "HOME is not set" : join(home, ".kube", "config")
  const variable = process.env["KUBECONFIG"] === "" ? "KUBECONFIG is empty" : "KUBECONFIG is not set"
  return `No kubeconfig found: ${variable}, there is no ~/.kube/config ` +
    `(${homeConfig}) and no in-cluster service account (${SERVICE_ACCOUNT_TOKEN}). Set KUBECONFIG, ` +
    "write ~/.kube/config, or run in a pod with a service account."
}

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
  if (options.kubeConfig === undefined && foundNothing(config)) {
    return yield* new RuntimeStartError({ message: noKubeconfig() })
  }
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
