/**
 * The reaper on a cluster (src/providers/kubernetes/reaper.ts), against the
 * stand-in: an owner process that holds a Lease and made a labelled pod and
 * Secret is SIGKILLed; a reaper pass then removes its pod, its Secret, its NetworkPolicy, its PVC
 * labelled delete-workspace and its Lease, and leaves an unlabelled pod, a
 * kept-alive pod (no owner label) and a workspace PVC without the label. A live
 * owner's objects are never touched, even when its clock lags the server's; the periodic reaper removes the pod and
 * Sandbox of an owner whose Lease is missing.
 */
import { assert, it } from "@effect/vitest"
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type V1ObjectMeta
} from "@kubernetes/client-node"
import { Effect, Fiber } from "effect"
import { createSandbox, waitReady } from "../../src/engines/kubernetes/agentSandbox.ts"
import { reapOrphans, startKubeReaper } from "../../src/providers/kubernetes/reaper.ts"
import { describeCluster, eventually, namespace, onStandIn, podImage, podNames, servingTemplate } from "./lifecycle.ts"
import { killed, ownerProcess } from "./ownerProcess.ts"

/** An owner process (fixtures/leaseOwner.ts) until READY: its Lease's name. */
const owner = (kubeconfigPath: string, terms: object) =>
  ownerProcess("leaseOwner.ts", [kubeconfigPath, namespace, podImage(), JSON.stringify(terms)], "30 seconds").pipe(
    Effect.map(({ child, ready }) => ({ child, lease: ready }))
  )

/** A pod or PVC made by the test itself, deleted with the scope (whatever the reaper left). */
const made = (kc: KubeConfig, kind: "pod" | "pvc", metadata: V1ObjectMeta) => {
  const core = kc.makeApiClient(CoreV1Api)
  const name = metadata.name!
  return Effect.acquireRelease(
    Effect.promise(() =>
      kind === "pod"
        ? core.createNamespacedPod({
          namespace,
          body: {
            metadata,
            spec: { containers: [{ name: "main", image: podImage(), command: ["sleep", "300"] }] }
          }
        })
        : core.createNamespacedPersistentVolumeClaim({
          namespace,
          body: {
            metadata,
            spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } }
          }
        })
    ),
    () =>
      Effect.promise(() =>
        (kind === "pod"
          ? core.deleteNamespacedPod({ name, namespace })
          : core.deleteNamespacedPersistentVolumeClaim({ name, namespace })).catch(() => undefined)
      )
  )
}

/** A renewTime from an owner whose clock is 30 s behind the server's: stale at a glance. */
const lagging = () => new V1MicroTime(Date.now() - 30_000)

const names = (list: { items: Array<{ metadata?: { name?: string } }> }) =>
  list.items.map((item) => item.metadata!.name!).sort()

describeCluster("reaper on a cluster", () => {
  it.live(
    "removes a SIGKILLed owner's pod, Secret, NetworkPolicy, delete-workspace PVC and Lease, and nothing else",
    () =>
      onStandIn((kc, cluster) =>
        Effect.gen(function*() {
          const core = kc.makeApiClient(CoreV1Api)
          yield* made(kc, "pod", { name: "bystander" })
          yield* made(kc, "pod", { name: "kept-alive", labels: { "effect-sandbox.managed": "true" } })
          const { child, lease } = yield* owner(cluster.kubeconfigPath, { renewEvery: 200, staleAfter: "2 seconds" })
          const owned = { "effect-sandbox.managed": "true", "effect-sandbox.owner": lease }
          yield* made(kc, "pvc", { name: "workspace-kept", labels: owned })
          yield* made(kc, "pvc", {
            name: "workspace-deleted",
            labels: { ...owned, "effect-sandbox.delete-workspace": "true" }
          })
          // The network option's NetworkPolicy (src/engines/kubernetes/egressPolicy.ts), labelled as its session's objects.
          const networking = kc.makeApiClient(NetworkingV1Api)
          yield* Effect.promise(() =>
            networking.createNamespacedNetworkPolicy({
              namespace,
              body: {
                metadata: { name: "egress-owned", labels: owned },
                spec: { podSelector: { matchLabels: { "effect-sandbox.session": "s" } }, policyTypes: ["Egress"] }
              }
            })
          )

          // The owner lives: a pass (even with no margin for skew) touches nothing.
          assert.deepStrictEqual(yield* reapOrphans(kc, namespace, { clockSkew: 0 }), [])

          yield* killed(child)
          // The Lease goes stale 2 s after its last renewal (the server's Date header counts whole seconds).
          yield* Effect.sleep("3500 millis")
          const removed = yield* reapOrphans(kc, namespace, { clockSkew: 0 })
          assert.deepStrictEqual([...removed].sort(), [
            `Lease/${lease}`,
            "NetworkPolicy/egress-owned",
            "PersistentVolumeClaim/workspace-deleted",
            `Pod/owned-${lease}`,
            `Secret/owned-${lease}`
          ])
          assert.isTrue(
            yield* eventually(async () =>
              JSON.stringify(await podNames(kc).then((all) => all.sort())) === `["bystander","kept-alive"]`
            ),
            "the owner's pod is still there"
          )
          assert.deepStrictEqual(names(yield* Effect.promise(() => core.listNamespacedSecret({ namespace }))), [])
          assert.deepStrictEqual(
            names(yield* Effect.promise(() => core.listNamespacedPersistentVolumeClaim({ namespace }))),
            ["workspace-kept"]
          )
          const leases = kc.makeApiClient(CoordinationV1Api)
          assert.deepStrictEqual(names(yield* Effect.promise(() => leases.listNamespacedLease({ namespace }))), [])
          assert.deepStrictEqual(
            names(yield* Effect.promise(() => networking.listNamespacedNetworkPolicy({ namespace }))),
            []
          )
        })
      ),
    60_000
  )

  it.live("an owner whose clock lags the server's keeps its objects while it renews, and loses them once it stops", () =>
    onStandIn((kc) =>
      Effect.gen(function*() {
        const leases = kc.makeApiClient(CoordinationV1Api)
        const name = "effect-sandbox-owner-lagging"
        yield* Effect.promise(() =>
          leases.createNamespacedLease({
            namespace,
            body: {
              metadata: {
                name,
                labels: { "effect-sandbox.managed": "true" },
                annotations: { "effect-sandbox.renew-every-ms": "200" }
              },
              spec: { holderIdentity: "lagging/1", leaseDurationSeconds: 2, renewTime: lagging() }
            }
          })
        )
        yield* made(kc, "pod", {
          name: "lagging-owned",
          labels: { "effect-sandbox.managed": "true", "effect-sandbox.owner": name }
        })
        const renewing = yield* Effect.promise(() =>
          leases.patchNamespacedLease(
            { name, namespace, body: { spec: { renewTime: lagging() } } },
            setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
          )
        ).pipe(Effect.andThen(Effect.sleep("200 millis")), Effect.forever, Effect.forkChild)
        // Suspected, then seen renewed during the confirmation: nothing is removed.
        assert.deepStrictEqual(yield* reapOrphans(kc, namespace, { clockSkew: 0 }), [])
        assert.deepStrictEqual(yield* Effect.promise(() => podNames(kc)), ["lagging-owned"])
        yield* Fiber.interrupt(renewing)
        assert.deepStrictEqual(
          [...(yield* reapOrphans(kc, namespace, { clockSkew: 0 }))].sort(),
          [`Lease/${name}`, "Pod/lagging-owned"]
        )
      })
    ))

  it.live("the periodic reaper removes the pod and Sandbox of an owner whose Lease is missing", () =>
    onStandIn((kc) =>
      Effect.gen(function*() {
        const orphan = { "effect-sandbox.managed": "true", "effect-sandbox.owner": "effect-sandbox-owner-gone" }
        yield* made(kc, "pod", { name: "orphan", labels: orphan })
        // A Sandbox goes with its pod (which its controller owns, so the reaper leaves it to the garbage collector).
        yield* createSandbox(kc, {
          name: "orphan-box",
          namespace,
          labels: orphan,
          podTemplate: servingTemplate("x", orphan)
        })
        yield* waitReady(kc, { namespace, name: "orphan-box" })
        yield* startKubeReaper(kc, namespace, "300 millis", { missingLeaseGrace: "300 millis" })
        assert.isTrue(
          yield* eventually(async () => (await podNames(kc)).length === 0, 10_000),
          "the orphans were not reaped"
        )
        const sandboxes = yield* Effect.promise(() =>
          kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
            group: "agents.x-k8s.io",
            version: "v1alpha1",
            namespace,
            plural: "sandboxes"
          })
        )
        assert.deepStrictEqual(sandboxes.items, [])
      })
    ))
})
