/**
 * A KubernetesRuntime owner that dies without releasing: a child process (fixtures/runtimeOwner.ts)
 * starts a session on the stand-in with short owner-lease terms and is SIGKILLed. A reaper pass
 * then removes the session's pod, service, key Secret and the owner's Lease; the workspace PVC is
 * kept (workspaces outlive their sessions) unless the session was started with `deleteWorkspace`,
 * whose PVC carries `effect-sandbox.delete-workspace=true` and goes too. Nothing else is left.
 */
import { assert, it } from "@effect/vitest"
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { reapOrphans } from "../../src/providers/kubernetes/reaper.ts"
import { assertEngineClean, namespace, noObjects, sessionObjects, useStandIn } from "./helpers.ts"
import { describeCluster, eventually } from "./lifecycle.ts"
import { killed, ownerProcess } from "./ownerProcess.ts"

const TERMS = { renewEvery: "1 second", staleAfter: "3 seconds" }

const leaseNames = (kc: KubeConfig) =>
  Effect.promise(async () =>
    (await kc.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace })).items.map((lease) =>
      lease.metadata!.name!
    )
  )

describeCluster("KubernetesRuntime owner killed (stand-in)", () => {
  const cluster = useStandIn()

  const killAndReap = (deleteWorkspace: boolean) =>
    Effect.gen(function*() {
      const kc = cluster.kubeConfig
      const sessionId = `ok-${randomBytes(4).toString("hex")}`
      const pod = `effect-sandbox-${sessionId}`
      const { child } = yield* ownerProcess("runtimeOwner.ts", [
        cluster.standIn.kubeconfigPath,
        cluster.image,
        sessionId,
        JSON.stringify({ ownerLease: TERMS, deleteWorkspace })
      ], "120 seconds")
      const core = kc.makeApiClient(CoreV1Api)
      const live = yield* Effect.promise(() => core.readNamespacedPod({ name: pod, namespace }))
      const lease = live.metadata!.labels!["effect-sandbox.owner"]!
      assert.match(lease, /^effect-sandbox-owner-[0-9a-f]{10}$/)
      assert.deepStrictEqual(yield* leaseNames(kc), [lease])
      // The owner lives: a pass leaves its session alone.
      assert.deepStrictEqual(yield* reapOrphans(kc, namespace, { clockSkew: 0 }), [])

      yield* killed(child)
      // Stale 3 s after its last renewal (the server's Date header counts whole seconds).
      yield* Effect.sleep("4500 millis")
      const removed = yield* reapOrphans(kc, namespace, { clockSkew: 0 })
      assert.deepStrictEqual([...removed].sort(), [
        `Lease/${lease}`,
        ...(deleteWorkspace ? [`PersistentVolumeClaim/${pod}-pvc`] : []),
        `Pod/${pod}`,
        `Secret/${pod}-key`,
        `Service/${pod}-svc`
      ])
      // A deleted pod terminates for a moment (and holds its PVC until it is gone).
      const left = { ...noObjects, claims: deleteWorkspace ? [] : [`${pod}-pvc`] }
      yield* eventually(async () =>
        JSON.stringify(await Effect.runPromise(sessionObjects(kc, sessionId))) === JSON.stringify(left)
      )
      assert.deepStrictEqual(yield* sessionObjects(kc, sessionId), left)
      assert.deepStrictEqual(yield* leaseNames(kc), [])
      if (!deleteWorkspace) {
        yield* Effect.promise(() => core.deleteNamespacedPersistentVolumeClaim({ name: `${pod}-pvc`, namespace }))
        yield* eventually(async () => (await Effect.runPromise(sessionObjects(kc, sessionId))).claims.length === 0)
      }
      yield* assertEngineClean(cluster.standIn)
    })

  it.live(
    "reaps a SIGKILLed owner's pod, service, Secret and Lease, and keeps its workspace",
    () => Effect.scoped(killAndReap(false)),
    180_000
  )

  it.live(
    "reaps the workspace too when the session was started with deleteWorkspace",
    () => Effect.scoped(killAndReap(true)),
    180_000
  )
})
