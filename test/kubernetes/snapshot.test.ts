/**
 * KubernetesRuntime's snapshots on the stand-in (a VolumeSnapshot of the workspace PVC,
 * standin/snapshots.ts): a fork's copies start with the source's workspace files and diverge; a
 * kept snapshot is listed, starts a runtime and is removed; starting from a missing one fails at
 * once; a cluster without the API, or without a class, refuses saying which (`fromSnapshot` too); a
 * class named but missing fails the take with the snapshotter's error; under the docs' Role a named
 * class forks and the default class cannot be read; a dead owner's snapshot is reaped and a kept one
 * is not; nothing is left. One source runtime serves the first case.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node"
import { Effect, Exit, Scope } from "effect"
import {
  InvalidOptionsError,
  RuntimeSnapshotError,
  RuntimeStartError,
  UnsupportedCapabilityError
} from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { reapOrphans } from "../../src/providers/kubernetes/reaper.ts"
import { buildRuntime, sh } from "../docker/helpers.ts"
import { describeDocker, toolsImage } from "../docker/infra.ts"
import { assertEngineClean, namespace, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"
import { kubeConfigOf } from "./lifecycle.ts"
import { docsRole } from "./standin/rbac.ts"
import { standIn } from "./standin/server.ts"

/** The stand-in's one VolumeSnapshotClass, the default. */
const CLASS = { name: "standin-snapshots", default: true }

const SNAPSHOTS = { group: "snapshot.storage.k8s.io", version: "v1", namespace, plural: "volumesnapshots" }

/** The names of the namespace's VolumeSnapshots and PVCs. */
const leftObjects = (kc: KubeConfig) =>
  Effect.promise(async () => {
    const snapshots = await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject(SNAPSHOTS) as {
      items: Array<{ metadata: { name: string } }>
    }
    const claims = await kc.makeApiClient(CoreV1Api).listNamespacedPersistentVolumeClaim({ namespace })
    return {
      snapshots: snapshots.items.map((item) => item.metadata.name),
      claims: claims.items.map((item) => item.metadata?.name)
    }
  })

describeDocker("KubernetesRuntime snapshots (stand-in)", () => {
  const cluster = useStandIn({ volumeSnapshots: { classes: [CLASS] } })

  it.live(
    "a fork's copies see the source's workspace and diverge; a kept snapshot is listed, starts a runtime, is removed",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const options = { kubeConfig: cluster.kubeConfig }
        const source = yield* buildRuntime(
          standInLayer(cluster, { sessionId: sessionIdOf("snap"), deleteWorkspace: true })
        )
        const { rt } = source
        assert.isTrue(rt.info.capabilities.snapshot)
        yield* sh(rt, "echo base > /workspace/state.txt")

        const forks = yield* Scope.make()
        const copies = yield* rt.fork(2).pipe(Scope.provide(forks))
        assert.lengthOf(copies, 2)
        yield* Effect.forEach(copies, (copy, i) => sh(copy, `echo copy-${i} >> /workspace/state.txt`), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          yield* Effect.forEach(
            copies,
            (copy) => Effect.map(sh(copy, "cat /workspace/state.txt"), (out) => out.content)
          ),
          ["base\ncopy-0", "base\ncopy-1"]
        )
        assert.strictEqual((yield* sh(rt, "cat /workspace/state.txt")).content, "base")
        yield* Scope.close(forks, Exit.void)
        // The fork's snapshot and the copies' PVCs went with them.
        assert.deepStrictEqual((yield* leftObjects(cluster.kubeConfig)).snapshots, [])

        const kept = yield* rt.snapshot({ keep: true })
        assert.deepInclude(kept, { provider: "Kubernetes", keeps: "workspace", kept: true })
        const listed = yield* KubernetesRuntime.listSnapshots(options)
        assert.deepStrictEqual(listed.map((s) => [s.id, s.kept]), [[kept.id, true]])
        const started = yield* buildRuntime(standInLayer(cluster, { fromSnapshot: kept, deleteWorkspace: true }))
        assert.strictEqual((yield* sh(started.rt, "cat /workspace/state.txt")).content, "base")
        yield* started.release
        yield* source.release
        // Kept: still there after its runtime; removed on purpose.
        assert.deepStrictEqual((yield* leftObjects(cluster.kubeConfig)).snapshots, [kept.id])
        yield* KubernetesRuntime.removeSnapshot(kept, options)
        assert.deepStrictEqual(yield* KubernetesRuntime.listSnapshots(options), [])

        const missing = yield* Effect.flip(
          buildRuntime(standInLayer(cluster, { fromSnapshot: "effect-sandbox-gone-snap-0", deleteWorkspace: true }))
        )
        assert.instanceOf(missing, RuntimeStartError)
        assert.include(missing.message, "the VolumeSnapshot effect-sandbox-gone-snap-0 does not exist")
        assert.deepStrictEqual(yield* leftObjects(cluster.kubeConfig), { snapshots: [], claims: [] })
        yield* assertEngineClean(cluster.standIn)
      })),
    180_000
  )

  it.live("a dead owner's VolumeSnapshot is reaped; a kept one is not", () =>
    Effect.gen(function*() {
      const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi)
      const make = (name: string, labels: Record<string, string>) =>
        Effect.promise(() =>
          api.createNamespacedCustomObject({
            ...SNAPSHOTS,
            body: {
              apiVersion: "snapshot.storage.k8s.io/v1",
              kind: "VolumeSnapshot",
              metadata: { name, labels: { "effect-sandbox.managed": "true", ...labels } },
              spec: { source: { persistentVolumeClaimName: "effect-sandbox-gone-pvc" } }
            }
          })
        )
      yield* make("orphan-snap", { "effect-sandbox.owner": "effect-sandbox-owner-gone" })
      yield* make("kept-snap", {})
      const removed = yield* reapOrphans(cluster.kubeConfig, namespace, { missingLeaseGrace: "100 millis" })
      assert.deepStrictEqual(removed, ["VolumeSnapshot/orphan-snap"])
      assert.deepStrictEqual((yield* leftObjects(cluster.kubeConfig)).snapshots, ["kept-snap"])
      // The snapshotter's error for a PVC that does not exist.
      const kept: { status?: { readyToUse?: boolean; error?: { message?: string } } } = yield* Effect.promise(() =>
        api.getNamespacedCustomObject({ ...SNAPSHOTS, name: "kept-snap" })
      )
      assert.isFalse(kept.status?.readyToUse)
      assert.include(kept.status?.error?.message, "failed to retrieve PVC effect-sandbox-gone-pvc from the lister")
      yield* Effect.promise(() => api.deleteNamespacedCustomObject({ ...SNAPSHOTS, name: "kept-snap" }))
    }), 60_000)

  it.live(
    "a cluster without the VolumeSnapshot API, or without a class, refuses saying which; a missing class fails the take",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const image = toolsImage()
        const refusal = (volumeSnapshots?: { classes: Array<{ name: string }> }) =>
          Effect.gen(function*() {
            const other = yield* standIn(volumeSnapshots === undefined ? {} : { volumeSnapshots })
            const options = { kubeConfig: kubeConfigOf(other.kubeconfigPath), baseImage: image, deleteWorkspace: true }
            const { rt } = yield* buildRuntime(KubernetesRuntime.layer(options))
            assert.isFalse(rt.info.capabilities.snapshot)
            const [snapshot, fork] = [yield* Effect.flip(rt.snapshot()), yield* Effect.flip(rt.fork(1))]
            assert.instanceOf(snapshot, UnsupportedCapabilityError)
            assert.instanceOf(fork, UnsupportedCapabilityError)
            assert.strictEqual(fork.capability, "fork")
            // Nothing to start from either: refused before anything is made.
            const from = yield* Effect.flip(buildRuntime(KubernetesRuntime.layer({ ...options, fromSnapshot: "x" })))
            assert.instanceOf(from, InvalidOptionsError)
            assert.strictEqual(
              from.message,
              `KubernetesRuntime options: fromSnapshot: Kubernetes takes no snapshots here: ${
                snapshot.message.replace(/^The kubernetes runtime cannot snapshot: /, "").replace(/\.$/, "")
              }.`
            )
            return snapshot.message
          })
        // Named but missing: offered (the class is not read), and the snapshotter's error fails the take.
        const missingClass = Effect.gen(function*() {
          const { rt } = yield* buildRuntime(
            standInLayer(cluster, { volumeSnapshotClassName: "missing-class", deleteWorkspace: true })
          )
          assert.isTrue(rt.info.capabilities.snapshot)
          return yield* Effect.flip(rt.snapshot())
        })
        const [noApi, noClass, failed] = yield* Effect.all(
          [refusal(), refusal({ classes: [{ name: "not-default" }] }), missingClass],
          { concurrency: "unbounded" }
        )
        assert.instanceOf(failed, RuntimeSnapshotError)
        assert.strictEqual(failed.provider?.reason, "unknown")
        assert.include(
          failed.message,
          `Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "missing-class" not found`
        )
        assert.deepStrictEqual((yield* leftObjects(cluster.kubeConfig)).snapshots, [])
        assert.strictEqual(
          noApi,
          "The kubernetes runtime cannot snapshot: the cluster serves no VolumeSnapshot API (snapshot.storage.k8s.io: install the CSI external-snapshotter's CRDs and controller)."
        )
        assert.strictEqual(
          noClass,
          "The kubernetes runtime cannot snapshot: the cluster has no default VolumeSnapshotClass: name one with volumeSnapshotClassName."
        )
      })),
    120_000
  )

  it.live(
    "under the docs' Role: a named class forks; the default class, cluster-scoped, cannot be read",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const other = yield* standIn({ rbac: docsRole(), volumeSnapshots: { classes: [CLASS] } })
        const kubeConfig = kubeConfigOf(other.kubeconfigPath)
        const layer = (volumeSnapshotClassName?: string) =>
          KubernetesRuntime.layer({
            kubeConfig,
            baseImage: toolsImage(),
            deleteWorkspace: true,
            ...(volumeSnapshotClassName === undefined ? {} : { volumeSnapshotClassName })
          })
        const [unnamed, named] = yield* Effect.all([buildRuntime(layer()), buildRuntime(layer(CLASS.name))], {
          concurrency: "unbounded"
        })
        const refused = yield* Effect.flip(unnamed.rt.snapshot())
        assert.strictEqual(
          refused.message,
          "The kubernetes runtime cannot snapshot: volumeSnapshotClassName is not set and the cluster's default VolumeSnapshotClass could not be read (a namespaced Role cannot list this cluster-scoped kind): name the class with volumeSnapshotClassName."
        )
        yield* sh(named.rt, "echo under the Role > /workspace/role.txt")
        const copied = yield* Effect.scoped(
          Effect.flatMap(named.rt.fork(1), ([copy]) => sh(copy!, "cat /workspace/role.txt"))
        )
        assert.strictEqual(copied.content, "under the Role")
        yield* Effect.all([unnamed.release, named.release], { concurrency: "unbounded" })
        assert.deepStrictEqual(yield* leftObjects(kubeConfig), { snapshots: [], claims: [] })
      })),
    120_000
  )
})
