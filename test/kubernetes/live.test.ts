/**
 * The conformance suite against a real cluster, opt-in: with `EFFECT_SANDBOX_K8S_LIVE=1` and a
 * kubeconfig (`KUBECONFIG` or ~/.kube/config) it runs KubernetesRuntime in pod mode through that
 * kubeconfig, on the image `EFFECT_SANDBOX_K8S_IMAGE` names (one the cluster can pull or already
 * has: docs/runtimes/kubernetes.md says how to push it), in `EFFECT_SANDBOX_K8S_NAMESPACE` (default
 * the context's): the action conformance, the hosted lifecycle suite (pause with the PVC kept,
 * attach, reaper, a server dying at start, release), and a start on an image no registry has. Once
 * per connect mode of `EFFECT_SANDBOX_K8S_CONNECT` (comma-separated: `portForward`, `direct`;
 * default the runtime's `auto`). `npm run test:kubernetes-real` runs it on the single-node cluster
 * of scripts/kubernetes/ as the docs' Role. Without the opt-in it is skipped, saying why; with the
 * opt-in and something missing it fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { vi } from "vitest"
import { RuntimeStartError } from "../../src/index.ts"
import { KubernetesRuntime, type KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { kubernetesLifecycle } from "../conformance/hosted/kubernetes.ts"
import { hostedLifecycleConformance } from "../conformance/hostedLifecycle.ts"
import { runConformance } from "../conformance/suite.ts"
import { startError } from "../docker/helpers.ts"
import { assertObjectsGone, sessionIdOf, sessionObjects } from "./helpers.ts"

// A case starts its own pod and waits on release until it is gone, which a 1.20 kubelet confirms
// only after its container GC (a pass a minute) has removed the pod's sandbox: up to 70 s.
vi.setConfig({ testTimeout: 150_000 })

const kubeconfig = process.env["KUBECONFIG"] ?? join(homedir(), ".kube", "config")
const image = process.env["EFFECT_SANDBOX_K8S_IMAGE"]
const namespace = process.env["EFFECT_SANDBOX_K8S_NAMESPACE"]
const connects = (process.env["EFFECT_SANDBOX_K8S_CONNECT"] ?? "auto").split(",") as ReadonlyArray<
  NonNullable<KubernetesRuntimeOptions["connect"]>
>
const optedIn = process.env["EFFECT_SANDBOX_K8S_LIVE"] === "1"
const missing = !existsSync(kubeconfig)
  ? `no kubeconfig at ${kubeconfig}`
  : image === undefined
  ? "EFFECT_SANDBOX_K8S_IMAGE names no image the cluster can pull"
  : undefined
if (optedIn && missing !== undefined) {
  throw new Error(`EFFECT_SANDBOX_K8S_LIVE=1 but ${missing} (docs/runtimes/kubernetes.md, contributors' section)`)
}

const kubeConfigOf = () => {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(kubeconfig)
  return kubeConfig
}

/** The namespace given, else the context's, as the runtime picks it. */
const namespaceOf = () => {
  const kubeConfig = kubeConfigOf()
  return namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? "default"
}

/** Resolves once the session's pod shows a failed pull, or on `signal` (polled: this case runs on the TestClock). */
/**
 * Until the pod shows its pull failing and the kubelet's `Failed` event for it is recorded: the
 * kubelet writes the two apart, the event later under load, and the start's message quotes both.
 */
const pullFailed = async (kubeConfig: KubeConfig, inNamespace: string, sessionId: string, signal: AbortSignal) => {
  const core = kubeConfig.makeApiClient(CoreV1Api)
  const labelSelector = `effect-sandbox.session=${sessionId}`
  while (!signal.aborted) {
    const pods = (await core.listNamespacedPod({ namespace: inNamespace, labelSelector })).items
    const failing = pods.find((pod) =>
      (pod.status?.containerStatuses ?? []).some((c) =>
        c.state?.waiting?.reason === "ErrImagePull" || c.state?.waiting?.reason === "ImagePullBackOff"
      )
    )
    if (failing !== undefined) {
      const fieldSelector = `involvedObject.name=${failing.metadata!.name}`
      const events = (await core.listNamespacedEvent({ namespace: inNamespace, fieldSelector })).items
      if (events.some((event) => event.reason === "Failed" && event.message?.startsWith("Failed to pull image"))) return
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * `wait`, with the TestClock moved on a second each second while it runs: the session's owner Lease
 * is then renewed as in real time, so the reaper case running beside this one (which judges Leases
 * by the API server's clock) does not take a slow pull's pod for a dead owner's and delete it.
 */
const followingRealTime = <A, E, R>(wait: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(
    wait,
    Effect.forever(
      Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1000))).pipe(
        Effect.andThen(TestClock.adjust("1 second"))
      )
    )
  )

/**
 * What a test's pod asks for: little, so that the suite's concurrent sessions fit a small node and
 * its namespace's quota (the memory limit stays the runtime's 2Gi).
 */
const resources = { requests: { cpu: "50m", memory: "512Mi" } }

const title = optedIn ? "kubernetes (live cluster)" : "kubernetes (live cluster) (skipped: EFFECT_SANDBOX_K8S_LIVE=1 " +
  "is not set; see docs/runtimes/kubernetes.md)"
/**
 * Concurrent, blocks included: a case spends most of its time waiting on its pod's start and removal,
 * and the conformance's blocks hold a few cases each (`--maxConcurrency` bounds the whole).
 */
const suite = optedIn ? describe.concurrent : describe.skip
suite(title, () => {
  for (const connect of connects) {
    const given = { ...(namespace === undefined ? {} : { namespace }), connect, resources }
    describe(`connect: ${connect}`, () => {
      runConformance({
        name: `KubernetesRuntime (live cluster, connect ${connect})`,
        layer: ({ noChangeTimeoutSeconds }) =>
          KubernetesRuntime.layer({
            ...given,
            ...(image === undefined ? {} : { image }),
            noChangeTimeoutSeconds,
            ipython: true,
            browser: true,
            deleteWorkspace: true
          }),
        containsProcesses: true,
        capabilities: { pause: true, ipython: true, browser: true, mcp: false, snapshot: false }
      })
      // Pause, attach, the reaper, a dying server and release, on the cluster.
      // A reaped pod is gone once its kubelet confirms it: within the minute's GC pass on 1.20 and 1.21.
      hostedLifecycleConformance({
        ...kubernetesLifecycle(() => ({
          kubeconfigPath: kubeconfig,
          ...(image === undefined ? {} : { image }),
          ...given
        })),
        removalWithin: "120 seconds"
      })
    })
  }

  /**
   * A pull that fails may pass (a registry blip), so the runtime may wait it out until the start's
   * deadline: once the pod shows the failure (or the start has ended), the TestClock passes it.
   */
  it.effect(
    "an image no registry has fails the start with the kubelet's reason and events",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("live-nopull")
        const started = yield* Effect.forkChild(startError(
          KubernetesRuntime.layer({
            ...(namespace === undefined ? {} : { namespace }),
            resources,
            sessionId,
            image: "effect-sandbox/no-such-image:1",
            deleteWorkspace: true
          })
        ))
        yield* followingRealTime(Effect.raceFirst(
          Effect.promise((signal) => pullFailed(kubeConfigOf(), namespaceOf(), sessionId, signal)),
          Fiber.await(started)
        ))
        yield* TestClock.adjust("5 minutes")
        const error = yield* Fiber.join(started)
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          new RegExp(
            `^The pod effect-sandbox-${sessionId} did not start: (ErrImagePull|ImagePullBackOff): .*no-such-image`
          ),
          error.message
        )
        assert.include(error.message, `Warning Failed: Failed to pull image "effect-sandbox/no-such-image:1"`)
        assert.strictEqual(error.reason, "provider")
        assert.strictEqual(error.provider?.reason, "image-missing")
        yield* assertObjectsGone(sessionObjects(kubeConfigOf(), sessionId, namespaceOf()))
      }),
    180_000
  )
})
