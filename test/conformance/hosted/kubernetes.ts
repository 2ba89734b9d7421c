/**
 * KubernetesRuntime's hosted lifecycle target, for the stand-in and for a real cluster: what a
 * session holds is every object with its label (pod, service, key Secret, PVC: `deleteWorkspace`,
 * so the workspace goes too); `KubernetesRuntime.attach` reaches a kept session and its release
 * removes it; pause deletes the pod and keeps the PVC (files, not
 * memory); the reaper judges owners by their Lease, so the reaper case runs on short terms.
 */
import { KubeConfig } from "@kubernetes/client-node"
import { Effect } from "effect"
import { KubernetesRuntime, type KubernetesRuntimeOptions } from "../../../src/kubernetes.ts"
import { sessionObjects } from "../../kubernetes/helpers.ts"
import type { HostedLifecycleTarget, LifecycleOptions } from "../hostedTarget.ts"
import { DYING_SERVER_ENV, DYING_SERVER_OUTPUT, type SharedOptions, sharedOptions } from "./shared.ts"

/**
 * Where the cluster is (its kubeconfig file), in which namespace, the image (a ready runtime image
 * the cluster pulls, or a base image the stand-in builds one from), the mode, how the server is
 * reached, and the pods' resources (a real cluster's quota and node size decide what fits).
 */
export interface KubernetesArgs {
  readonly kubeconfigPath: string
  readonly namespace?: string
  readonly image?: string
  readonly baseImage?: string
  readonly mode?: KubernetesRuntimeOptions["mode"]
  readonly connect?: KubernetesRuntimeOptions["connect"]
  readonly resources?: KubernetesRuntimeOptions["resources"]
}

const kubeConfigOf = (args: KubernetesArgs) => {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(args.kubeconfigPath)
  return kubeConfig
}

/** The cluster and the namespace: the one given, else the context's, as the runtime picks it. */
const place = (args: KubernetesArgs) => {
  const kubeConfig = kubeConfigOf(args)
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext())
  return { kubeConfig, namespace: args.namespace ?? context?.namespace ?? "default" }
}

/** The options of `args` that every layer of the target takes, attach's included. */
const given = (args: KubernetesArgs) => ({
  ...place(args),
  ...(args.connect === undefined ? {} : { connect: args.connect }),
  ...(args.resources === undefined ? {} : { resources: args.resources })
})

/** The runtime with the suite's options: the reaper's pace and the owner's Lease terms, short, in `ownerLease`. */
const layer = (args: KubernetesArgs, { reapEvery, ...shared }: SharedOptions) =>
  KubernetesRuntime.layer({
    ...given(args),
    ...(args.image === undefined ? {} : { image: args.image }),
    ...(args.baseImage === undefined ? {} : { baseImage: args.baseImage }),
    ...(args.mode === undefined ? {} : { mode: args.mode }),
    deleteWorkspace: true,
    ...shared,
    ...(reapEvery === undefined
      ? {}
      : { reapEvery, ownerLease: { renewEvery: "1 second", staleAfter: "3 seconds", clockSkew: "1 second" } })
  })

export const lifecycleLayer = (args: KubernetesArgs, lifecycle: LifecycleOptions) =>
  layer(args, sharedOptions(lifecycle))

/** Every object with the session's label, as `kind/name`. */
const objectsOf = async (args: KubernetesArgs, sessionId: string) => {
  const { kubeConfig, namespace } = place(args)
  const objects = await Effect.runPromise(sessionObjects(kubeConfig, sessionId, namespace))
  return Object.entries(objects).flatMap(([kind, names]) => names.map((name) => `${kind}/${name}`))
}

export const kubernetesLifecycle = (args: () => KubernetesArgs): HostedLifecycleTarget => ({
  name: "KubernetesRuntime",
  layer: (lifecycle) => lifecycleLayer(args(), lifecycle),
  sandboxes: (sessionId) => objectsOf(args(), sessionId),
  pause: { memorySurvives: false },
  attach: { layer: (sessionId) => KubernetesRuntime.attach(sessionId, { ...given(args()), deleteWorkspace: true }) },
  reaper: { owner: () => ({ module: import.meta.filename, args: args() }) },
  dyingServer: {
    layer: (sessionId) => layer(args(), { sessionId, env: DYING_SERVER_ENV }),
    exitCode: 1,
    output: DYING_SERVER_OUTPUT
  }
})
