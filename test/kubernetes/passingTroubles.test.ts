/**
 * What a live cluster gets over by itself does not fail a start: a pod no node has room for
 * (until an autoscaler adds one), a failed pull (a registry's blip), a workspace PVC not yet bound
 * (a slow provisioner). The start waits them out within its deadline (`aliveTimeout`, default
 * 5 minutes) and, when one lasts past it, fails naming the last reason seen. The stand-in holds
 * each condition until the test releases it (standin/gate.ts).
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, type V1Pod } from "@kubernetes/client-node"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { CmdOutputObservation, CmdRunAction, RuntimeStartError } from "../../src/index.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import {
  assertNothingLeft,
  namespace,
  podShows,
  sessionIdOf,
  standInLayer,
  unschedulable,
  useStandIn
} from "./helpers.ts"

describeDocker("KubernetesRuntime waits out what passes (stand-in)", () => {
  const cluster = useStandIn()

  /** Start a session while `hold` holds, release once its pod shows `seen`: the session runs commands. */
  const startsOnceReleased = (prefix: string, hold: () => () => void, seen: (pod: V1Pod) => boolean) =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf(prefix)
      const release = hold()
      const started = yield* Effect.forkChild(
        buildRuntime(standInLayer(cluster, { sessionId, deleteWorkspace: true })).pipe(Effect.ensuring(
          Effect.sync(release)
        ))
      )
      const shown = yield* podShows(cluster.kubeConfig, sessionId, seen)
      release()
      assert.isTrue(shown, "the pod never showed the held condition")
      const runtime = yield* Fiber.join(started)
      const out = yield* runtime.rt.run(new CmdRunAction({ command: "echo started" }))
      assert.instanceOf(out, CmdOutputObservation)
      assert.strictEqual(out.content.trim(), "started")
      yield* runtime.release
      yield* assertNothingLeft(cluster, sessionId)
    })

  it.live(
    "a pod Unschedulable for want of room starts once the autoscaler's node comes",
    () =>
      startsOnceReleased(
        "cap",
        () => cluster.standIn.weather.holdCapacity(),
        unschedulable("Insufficient cpu")
      ),
    120_000
  )

  it.live(
    "a workspace PVC that binds late holds the pod Unschedulable until it binds",
    () =>
      startsOnceReleased(
        "pvc",
        () => cluster.standIn.weather.holdBinding(),
        unschedulable("pod has unbound immediate PersistentVolumeClaims")
      ),
    120_000
  )

  it.live(
    "a pull that fails once is pulled again",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("pull")
        cluster.standIn.weather.failNextPull()
        const { rt, release } = yield* buildRuntime(standInLayer(cluster, { sessionId, deleteWorkspace: true }))
        const out = yield* rt.run(new CmdRunAction({ command: "echo pulled" }))
        assert.instanceOf(out, CmdOutputObservation)
        assert.strictEqual(out.content.trim(), "pulled")
        // It did fail once: the kubelet's event says so.
        const events = yield* Effect.promise(() =>
          cluster.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({
            namespace,
            fieldSelector: `involvedObject.name=effect-sandbox-${sessionId}`
          })
        )
        assert.isTrue(
          events.items.some((e) => e.message?.includes("503 Service Unavailable") === true),
          "no failed pull among the pod's events"
        )
        yield* release
        yield* assertNothingLeft(cluster, sessionId)
      }),
    120_000
  )

  it.effect(
    "one that lasts past the start's deadline fails with the last reason seen",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("dl")
        const release = cluster.standIn.weather.holdCapacity()
        const started = yield* Effect.forkChild(
          Effect.scoped(Layer.build(standInLayer(cluster, { sessionId, deleteWorkspace: true }))).pipe(
            Effect.flip,
            Effect.ensuring(Effect.sync(release))
          )
        )
        assert.isTrue(
          yield* podShows(cluster.kubeConfig, sessionId, unschedulable("Insufficient cpu")),
          "the pod was never Unschedulable"
        )
        yield* TestClock.adjust("5 minutes")
        const error = yield* Fiber.join(started)
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          new RegExp(
            `^The pod effect-sandbox-${sessionId} did not start: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu\\..* \\(still so after 5m\\)\\.\\nIts events:\\n`
          )
        )
        assert.include(error.message, "Normal TriggeredScaleUp: pod triggered scale-up")
        assert.strictEqual(error.provider?.reason, "unschedulable")
        yield* assertNothingLeft(cluster, sessionId)
      }),
    120_000
  )
})
