/**
 * Pods that never become ready fail the start with a RuntimeStartError naming the pod's own
 * reason and events, as the stand-in's kubelet and scheduler report them: an image it cannot
 * pull (at the start's deadline: a pull may pass, passingTroubles.test.ts), a server that exits at once (restartPolicy Never: the pod fails with the exit code and
 * log), a nodeSelector no node matches, and a memory limit the server cannot start in. Each
 * failed start leaves nothing behind; a second start on a live session's id attaches to it.
 * Bad options fail before anything is created.
 */
import { assert, it } from "@effect/vitest"
import { KubeConfig, type V1Pod } from "@kubernetes/client-node"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import { CmdRunAction, InvalidOptionsError, RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import type { KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import {
  assertNothingLeft,
  podShows,
  pullFailed,
  sessionObjects,
  standInLayer,
  unschedulable,
  useStandIn
} from "./helpers.ts"

describeDocker("KubernetesRuntime start failures (stand-in)", () => {
  const cluster = useStandIn()

  /** Start a session with `options` that must fail: its error, once nothing of it is left. */
  const failedStart = (options: KubernetesRuntimeOptions) =>
    Effect.gen(function*() {
      const sessionId = `sf-${randomBytes(4).toString("hex")}`
      const layer = standInLayer(cluster, { sessionId, deleteWorkspace: true, ...options })
      const error = yield* Effect.scoped(Layer.build(layer)).pipe(Effect.flip)
      yield* assertNothingLeft(cluster, sessionId)
      return { error, pod: `effect-sandbox-${sessionId}` }
    })

  /**
   * Start a session with `options` whose pod shows a trouble that may pass (`seen`) and keeps it:
   * the start fails at its deadline (5 minutes, on the TestClock), once nothing of it is left.
   */
  const failedAtDeadline = (options: KubernetesRuntimeOptions, seen: (pod: V1Pod) => boolean) =>
    Effect.gen(function*() {
      const sessionId = `sf-${randomBytes(4).toString("hex")}`
      const layer = standInLayer(cluster, { sessionId, deleteWorkspace: true, ...options })
      const started = yield* Effect.forkChild(Effect.scoped(Layer.build(layer)).pipe(Effect.flip))
      assert.isTrue(yield* podShows(cluster.kubeConfig, sessionId, seen), "the pod never showed its trouble")
      yield* TestClock.adjust("5 minutes")
      const error = yield* Fiber.join(started)
      yield* assertNothingLeft(cluster, sessionId)
      return { error, pod: `effect-sandbox-${sessionId}` }
    })

  it.effect(
    "names ErrImagePull and the kubelet's Failed events for an image the cluster cannot pull, at the deadline",
    () =>
      Effect.gen(function*() {
        const { error, pod } = yield* failedAtDeadline({ image: "effect-sandbox/no-such-image:1" }, pullFailed)
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          new RegExp(`^The pod ${pod} did not start: (ErrImagePull|ImagePullBackOff): .*no-such-image`)
        )
        assert.include(error.message, `\nIts events:\n`)
        assert.include(error.message, `Warning Failed: Failed to pull image "effect-sandbox/no-such-image:1"`)
        // As data: the provider's refusal, its reason the missing image.
        assert.strictEqual(error.reason, "provider")
        assert.strictEqual(error.provider?.reason, "image-missing")
        assert.strictEqual(error.provider?.provider, "Kubernetes")
      }),
    120_000
  )

  it.live("names the exit code and log of a server that exits at once", () =>
    Effect.gen(function*() {
      // Node refuses to start: a module to preload that does not exist.
      const { error, pod } = yield* failedStart({ env: { NODE_OPTIONS: "--require /no/such/preload.js" } })
      assert.instanceOf(error, RuntimeStartError)
      assert.include(error.message, `The pod ${pod} did not start: the container exited: exit code 1 (Error).`)
      assert.include(error.message, "Its last log lines:")
      assert.include(error.message, "Cannot find module '/no/such/preload.js'")
      // As data: the server exited, with its exit code and last log lines.
      assert.strictEqual(error.reason, "server-exited")
      assert.strictEqual(error.exitCode, 1)
      assert.include(error.output, "Cannot find module '/no/such/preload.js'")
    }), 120_000)

  it.effect(
    "names Unschedulable and the FailedScheduling event for a nodeSelector no node matches, at the deadline",
    () =>
      Effect.gen(function*() {
        const { error, pod } = yield* failedAtDeadline(
          { nodeSelector: { "disk": "ssd" } },
          unschedulable("didn't match Pod's node affinity/selector")
        )
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          new RegExp(
            `^The pod ${pod} did not start: Unschedulable: 0/1 nodes are available: .* \\(still so after 5m\\)\\.\\n`
          )
        )
        assert.match(error.message, /Warning FailedScheduling: 0\/1 nodes are available/)
        assert.strictEqual(error.reason, "provider")
        assert.strictEqual(error.provider?.reason, "unschedulable")
      }),
    120_000
  )

  it.live("names OOMKilled and the limit when the server cannot start in its memory", () =>
    Effect.gen(function*() {
      const { error, pod } = yield* failedStart({ resources: { limits: { memory: "12Mi" } } })
      assert.instanceOf(error, RuntimeStartError)
      assert.include(
        error.message,
        `The pod ${pod} did not start: OOMKilled: the container exceeded its memory limit of 12Mi (exit code 137 (OOMKilled))`
      )
      assert.strictEqual(error.reason, "server-exited")
      assert.strictEqual(error.exitCode, 137)
    }), 120_000)

  it.live(
    "a credential the API server refuses is the provider's unauthorized, with its status",
    () =>
      Effect.gen(function*() {
        const wrong = new KubeConfig()
        wrong.loadFromOptions({
          clusters: cluster.kubeConfig.clusters,
          users: [{ name: "wrong", token: "not-the-token" }],
          contexts: [{ name: "wrong", cluster: cluster.kubeConfig.getCurrentCluster()!.name, user: "wrong" }],
          currentContext: "wrong"
        })
        const error = yield* Effect.scoped(Layer.build(standInLayer({ ...cluster, kubeConfig: wrong }))).pipe(
          Effect.flip
        )
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          /^Cannot create the owner lease in namespace default \(.*\): create lease effect-sandbox-owner-[0-9a-f]+: HTTP 401$/
        )
        assert.strictEqual(error.reason, "provider")
        assert.strictEqual(error.provider?.reason, "unauthorized")
        assert.strictEqual(error.provider?.status, 401)
      }),
    60_000
  )

  it.live(
    "a second start on a live session's id attaches to its pod, leaving the first one whole",
    () =>
      Effect.gen(function*() {
        const sessionId = `sf-${randomBytes(4).toString("hex")}`
        const pod = `effect-sandbox-${sessionId}`
        const objects = {
          pods: [pod],
          services: [`${pod}-svc`],
          secrets: [`${pod}-key`],
          ingresses: [],
          claims: [`${pod}-pvc`]
        }
        const first = yield* buildRuntime(standInLayer(cluster, { sessionId, deleteWorkspace: true }))
        // Kept alive on release: the session stays its first runtime's.
        const second = yield* buildRuntime(
          standInLayer(cluster, {
            sessionId,
            deleteWorkspace: true,
            sandbox: new SandboxConfig({ keepRuntimeAlive: true })
          })
        )
        assert.strictEqual((yield* second.rt.run(new CmdRunAction({ command: "hostname" }))).content.trim(), pod)
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), objects)
        yield* second.release
        const out = yield* first.rt.run(new CmdRunAction({ command: "echo still-here" }))
        assert.strictEqual(out.content.trim(), "still-here")
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), objects)
        yield* first.release
        yield* assertNothingLeft(cluster, sessionId)
      }),
    120_000
  )

  it.live(
    "refuses bad options with an InvalidOptionsError naming the field, creating nothing",
    () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<[KubernetesRuntimeOptions, string]> = [
          [{ namespace: "Bad_NS" }, "namespace: "],
          [{ pvcStorageSize: "lots" }, "pvcStorageSize: "],
          [{ resources: { limits: { memory: "2 GB" } } }, "resources.limits.memory: "],
          [{ connect: "tunnel" as "direct" }, "connect: "],
          [{ sessionId: "UPPER" }, "sessionId: "],
          [
            { workspace: "/tmp" } as KubernetesRuntimeOptions,
            "workspace: a host directory cannot be mounted into a Kubernetes pod (its workspace is /workspace there)"
          ],
          [{ noChangeTimeoutSeconds: -1 }, "noChangeTimeoutSeconds: "],
          [{ labels: { "a b": "x" } }, `labels: "a b" is not a key Kubernetes takes`],
          [
            { labels: { "effect-sandbox.owner": "x" } },
            `labels: "effect-sandbox.owner": the effect-sandbox. prefix is the runtime's own`
          ],
          [{ mode: "sandbox" as "pod" }, "mode: "],
          [{ idleTimeout: "5 seconds" }, "idleTimeout: must be longer than ownerLease.renewEvery (10s)"],
          [{ warmPool: "pool" }, "warmPool: needs warmPoolTemplate"],
          [{ mode: "pod", warmPoolTemplate: "tpl" }, "warmPoolTemplate: a SandboxClaim needs mode agentSandbox or auto"]
        ]
        for (const [options, field] of cases) {
          const { error } = yield* failedStart(options)
          assert.instanceOf(error, InvalidOptionsError)
          assert.include(error.message, `Invalid KubernetesRuntime options: ${field}`)
        }
      }),
    60_000
  )
})
