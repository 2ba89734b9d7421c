/**
 * The Kubernetes driver (services/Driver.ts): a session is a pod (or an agent-sandbox Sandbox, or
 * one claimed from a warm pool) with its PVC, service, ingress and key Secret, all made by `create`
 * (session.ts); the pod's own command is the server, so `launch` only waits for it to be ready and
 * reads why when it cannot be (image missing, unschedulable, a crash with its exit code and log);
 * the owner reaches it through a local listener (podLifecycle.ts); pause deletes the pod (files
 * survive, processes do not); a pod's watch reports its stop.
 *
 * Owners are judged by a Lease, not by the hosted runtime's host and pid: the owner of a pod may
 * run on any machine (or in a pod of its own that is gone with it), where no reaper of its host
 * would ever run again. So every layer holds a Lease its objects are labelled with, renewed on its
 * own heartbeat (which also keeps an agent-sandbox Sandbox's `shutdownTime` ahead, while paused
 * too), and runs the reaper that removes the objects of owners whose Lease went stale
 * (owner.ts). `find` answers only the session's tags, so the hosted reaper finds nothing here.
 */
import { Effect, Exit, Scope } from "effect"
import { classifyKube, KubeRetry } from "../../engines/kubernetes/apiCall.ts"
import { kubeCall, makeKube, readPodOrMissing } from "../../engines/kubernetes/client.ts"
import { expressible, NAMES_REFUSED } from "../../engines/kubernetes/egressPolicy.ts"
import { resourceNames, SESSION_LABEL, sessionSelector } from "../../engines/kubernetes/labels.ts"
import { connectMode } from "../../engines/kubernetes/podOptions.ts"
import { SERVER_PORT, WORKSPACE } from "../../engines/kubernetes/podSpec.ts"
import { type PodNotStarted, podStopped } from "../../engines/kubernetes/podWatch.ts"
import { explainStop } from "../../engines/kubernetes/startErrors.ts"
import { snapshotSupport } from "../../engines/kubernetes/volumeSnapshot.ts"
import { PROVIDER_RETRY, unsupported } from "../../hosted/options.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import { parseNetworkPolicy, refuseRules } from "../../network/policy.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../../runtimeImage/sandboxUser.ts"
import { InvalidOptionsError, ProviderError, type RuntimeStartError } from "../../schema/errors.ts"
import type { Driver, DriverDefinition, SandboxState } from "../../services/Driver.ts"
import { foundSession, removeFound } from "./found.ts"
import { checkKubernetesOptions, type KubernetesRuntimeOptions } from "./options.ts"
import { acquireOwnership } from "./owner.ts"
import { type KubePod, podDialer, podUrl } from "./podLifecycle.ts"
import { type KubeContext, makeSession } from "./session.ts"
import { kubeSnapshots } from "./snapshot.ts"
import { startFailure } from "./startFailure.ts"

const PROVIDER = "Kubernetes"

/**
 * How long a pod may take to be ready unless `aliveTimeout` says otherwise: long enough for a
 * cluster-autoscaler, Karpenter or Autopilot to add a node and for the image to be pulled on it.
 */
const START_DEADLINE = "5 minutes"

/** A start error of the cluster's as the provider's refusal (what `find`, `destroy` and pause answer with). */
const refusal = (operation: string) => (error: RuntimeStartError | PodNotStarted): ProviderError =>
  error._tag === "RuntimeStartError" && error.provider !== undefined ? error.provider : new ProviderError({
    provider: PROVIDER,
    operation,
    reason: error._tag === "PodNotStarted" && error.trouble.kind !== "exited" && error.trouble.kind !== "other"
      ? error.trouble.kind
      : "unknown",
    message: error.message
  })

/** Pause or resume by the pod's lifecycle; a bare pod found in the cluster cannot be made again here. */
const lifecycleStep = <A>(
  pod: KubePod,
  step: "pause" | "resume",
  effect: Effect.Effect<A, RuntimeStartError | PodNotStarted> | undefined
) =>
  effect === undefined
    ? Effect.fail(
      new ProviderError({
        provider: PROVIDER,
        operation: `${step} pod ${pod.podName}`,
        reason: "invalid",
        message: `The pod ${pod.podName} was started by another runtime: ${step} it there`
      })
    )
    : Effect.mapError(effect, refusal(`${step} pod ${pod.podName}`))

/** agentSandbox mode's module when this layer uses it (`mode`, discovery: sandboxSession.ts), else undefined. */
const sandboxMode = Effect.fn("sandboxMode")(function*(ctx: Pick<KubeContext, "kube" | "options">) {
  if ((ctx.options.mode ?? "pod") === "pod" && ctx.options.warmPoolTemplate === undefined) return undefined
  const module = yield* Effect.promise(() => import("./sandboxSession.ts"))
  return (yield* module.usesSandboxes(ctx.kube, ctx.options)) ? module : undefined
})

/**
 * The driver with every call to the API server (its own, the Lease's and the reaper's fibers forked
 * while connecting) retried under `providerRetry` while the server answers 429 or 5xx (apiCall.ts
 * `KubeRetry`): the engine's calls are client-node's, not the hosted `ProviderCall`'s.
 */
const connect = (options: KubernetesRuntimeOptions) => {
  const retrying = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provideService(effect, KubeRetry, options.providerRetry ?? PROVIDER_RETRY)
  return retrying(connectDriver(options)).pipe(Effect.map((driver): Driver<KubePod> => ({
    ...driver,
    create: (spec) => retrying(driver.create(spec)),
    launch: (pod) => retrying(driver.launch(pod)),
    destroy: (pod) => retrying(driver.destroy(pod)),
    find: (tags) => retrying(driver.find(tags)),
    state: (pod) => retrying(driver.state(pod)),
    endpoint: (pod, port, purpose) => retrying(driver.endpoint(pod, port, purpose)),
    stopped: (pod) => retrying(driver.stopped(pod)),
    snapshot: {
      ...driver.snapshot,
      take: (pod, tags) => retrying(driver.snapshot.take(pod, tags)),
      remove: (id) => retrying(driver.snapshot.remove(id)),
      find: (tags) => retrying(driver.snapshot.find(tags))
    },
    pause: {
      ...driver.pause,
      pause: (pod) => retrying(driver.pause.pause(pod)),
      resume: (pod) => retrying(driver.pause.resume(pod))
    }
  })))
}

const connectDriver = Effect.fn("KubernetesRuntime.connect")(function*(options: KubernetesRuntimeOptions) {
  yield* unsupported("KubernetesRuntime", options, ["lifetime"], "a pod has no lifetime of its own")
  yield* checkKubernetesOptions(options)
  const kube = yield* makeKube(options)
  const sandboxes = yield* sandboxMode({ kube, options })
  // Discovery beside the Lease's creation: no time of its own on a start.
  const [lease, snapshots] = yield* Effect.all([
    acquireOwnership(
      kube,
      { ...options.ownerLease, staleAfter: options.ownerLease?.staleAfter ?? options.idleTimeout },
      options.reapEvery ?? "30 seconds"
    ),
    snapshotSupport(kube, options.volumeSnapshotClassName)
  ], { concurrency: "unbounded" })
  const egress = yield* parseNetworkPolicy("KubernetesRuntime", options.network)
  if (egress !== undefined && options.warmPoolTemplate !== undefined) {
    return yield* new InvalidOptionsError({
      message: "KubernetesRuntime options: network: a pod claimed from warmPoolTemplate runs under its template's " +
        "NetworkPolicy, which this runtime does not write: set the egress in the SandboxTemplate, or leave network unset."
    })
  }
  const ctx: KubeContext = {
    kube,
    options,
    lease,
    sandboxes,
    startDeadline: options.aliveTimeout ?? START_DEADLINE,
    egress
  }
  const dial = podDialer(kube, connectMode(options.connect))
  const readPod = (pod: KubePod) =>
    readPodOrMissing(kube, pod.podName).pipe(Effect.mapError(refusal(`read pod ${pod.podName}`)))

  return {
    user: { name: DEFAULT_SANDBOX_USERNAME, id: DEFAULT_SANDBOX_UID },
    create: (spec) =>
      Effect.gen(function*() {
        const made = yield* Scope.make()
        const session = yield* makeSession(ctx, spec).pipe(
          Scope.provide(made),
          Effect.onError((cause) => Scope.close(made, Exit.failCause(cause)))
        )
        const pod: KubePod = {
          ...session,
          sessionId: spec.sessionId,
          made,
          ip: undefined,
          paused: false,
          listeners: new Map()
        }
        return { sandbox: pod, id: pod.podName }
      }),
    launch: (pod) =>
      pod.lifecycle.ready.pipe(
        Effect.tap((ip) => Effect.sync(() => pod.ip = ip)),
        Effect.as({ workspace: WORKSPACE }),
        Effect.mapError(startFailure)
      ),
    destroy: (pod) =>
      pod.made === undefined
        ? removeFound(ctx, pod).pipe(Effect.mapError(refusal(`delete session ${pod.sessionId}`)))
        : Scope.close(pod.made, Exit.void),
    find: Effect.fn("KubernetesRuntime.find")(function*(tags) {
      // Only the session's tags are labels here (the owner is a Lease): nothing carries any other.
      if (Object.keys(tags).some((tag) => tag !== TAGS.managed && tag !== TAGS.session)) return []
      const sessionId = tags[TAGS.session]
      const secrets = yield* kubeCall(
        "list the sessions' Secrets",
        () =>
          kube.core.listNamespacedSecret({
            namespace: kube.namespace,
            labelSelector: sessionId === undefined ? "effect-sandbox.managed=true" : sessionSelector(sessionId)
          })
      ).pipe(Effect.mapError(refusal("list the sessions' Secrets")))
      const anchors = secrets.items.filter((secret) =>
        secret.metadata?.name === resourceNames(secret.metadata?.labels?.[SESSION_LABEL] ?? "").keySecret
      )
      return yield* Effect.forEach(
        anchors,
        (secret) => foundSession(ctx, secret).pipe(Effect.mapError(refusal("read a session")))
      )
    }),
    state: (pod) =>
      pod.paused ? Effect.succeed<SandboxState>({ _tag: "paused" }) : readPod(pod).pipe(
        Effect.map((read): SandboxState => {
          const stop = explainStop(read)
          return stop === undefined
            ? { _tag: "running" }
            : { _tag: "gone", why: stop.message, outOfMemory: stop.outOfMemory }
        })
      ),
    endpoint: (pod, port, purpose) =>
      Effect.map(podUrl(dial, pod, purpose === "server" ? SERVER_PORT : port), (url) => ({ url })),
    stopped: (pod) => podStopped(kube, pod.podName, () => pod.paused),
    urls: (pod) => ({ urls: pod.urls, ide: pod.ide }),
    snapshot: kubeSnapshots(ctx, snapshots),
    pause: {
      keepsMemory: false,
      pause: (pod) =>
        Effect.suspend(() => {
          pod.paused = true
          pod.ip = undefined
          return lifecycleStep(pod, "pause", pod.lifecycle.pause)
        }),
      resume: (pod) =>
        lifecycleStep(pod, "resume", pod.lifecycle.resume).pipe(
          Effect.tap((ip) =>
            Effect.sync(() => {
              pod.ip = ip
              pod.paused = false
            })
          ),
          Effect.asVoid
        )
    }
  } satisfies Driver<KubePod>
})

export const kubernetesDriver: DriverDefinition<KubernetesRuntimeOptions, KubePod> = {
  provider: PROVIDER,
  sandboxNoun: "pod",
  kind: "kubernetes",
  network: (policy) => refuseRules("KubernetesRuntime", policy, (rule) => !expressible(rule), NAMES_REFUSED),
  classify: classifyKube,
  connect
}
