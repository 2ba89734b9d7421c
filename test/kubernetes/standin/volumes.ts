/**
 * PersistentVolumeClaims backed by Docker volumes: a claim is Bound at once (one
 * labelled volume per claim), or once `bound` is released while a test holds it,
 * and outlives the pods that mount it. A claim with a VolumeSnapshot as its `dataSource` binds
 * once that snapshot is ready, filled with its files (snapshots.ts); Pending until then. Deleting a
 * claim still mounted by a pod waits, as the `kubernetes.io/pvc-protection`
 * finalizer makes it wait on a cluster, until the last such pod is gone.
 */
import { docker, dockerName, labelsOf } from "./docker.ts"
import { Gate } from "./gate.ts"
import { PersistentVolumeClaims, Pods } from "./resources.ts"
import { copyVolume, type SnapshotController } from "./snapshots.ts"
import { type KObject, type NewObject, now, type Store } from "./store.ts"

const PROTECTION = "kubernetes.io/pvc-protection"

export class Volumes {
  private readonly store: Store
  private readonly instance: string
  constructor(store: Store, instance: string) {
    this.store = store
    this.instance = instance
  }

  /** The Docker volume behind claim `name` of `namespace`. */
  volumeOf(namespace: string, name: string) {
    return dockerName(this.instance, namespace, "pvc", name)
  }

  /** Set where the VolumeSnapshot API is served: the content a claim's `dataSource` names, once ready. */
  snapshots: Pick<SnapshotController, "readyContent"> | undefined

  /** Held: claims stay Pending (a provisioner still making their volumes), then bind when released. */
  readonly bound = new Gate()

  /** Create the claim's volume, then store the claim Bound (once `bound` is not held). */
  async create(namespace: string, body: NewObject): Promise<KObject> {
    const claim = this.store.create(PersistentVolumeClaims, namespace, {
      ...body,
      metadata: { ...body.metadata, finalizers: [PROTECTION] },
      status: { phase: "Pending" }
    })
    const source = body.spec?.dataSource as { kind?: string; name?: string } | undefined
    if (source?.kind === "VolumeSnapshot") {
      // Without the API nothing provisions it: Pending, as a provisioner that cannot find the snapshot leaves it.
      void this.snapshots?.readyContent(namespace, source.name ?? "").then((content) =>
        this.bind(namespace, claim, content)
      ).catch(() => {})
      return claim
    }
    if (this.bound.held) {
      const { signal } = this.bound
      signal.addEventListener("abort", () => void this.bind(namespace, claim).catch(() => {}), { once: true })
      return claim
    }
    return this.bind(namespace, claim)
  }

  private async bind(
    namespace: string,
    claim: KObject,
    from?: { readonly volume: string; readonly image: string }
  ): Promise<KObject> {
    if (this.store.find(PersistentVolumeClaims, namespace, claim.metadata.name)?.metadata.uid !== claim.metadata.uid) {
      return claim
    }
    const volume = this.volumeOf(namespace, claim.metadata.name)
    await docker.createVolume({
      Name: volume,
      Labels: labelsOf(this.instance, { "effect-sandbox.k8s-standin.claim": `${namespace}/${claim.metadata.name}` })
    })
    if (from !== undefined) await copyVolume(this.instance, from.image, from.volume, volume)
    return this.store.update(PersistentVolumeClaims, namespace, claim.metadata.name, (current) => ({
      ...current,
      spec: { ...current.spec, volumeName: `pvc-${claim.metadata.uid}` },
      status: {
        phase: "Bound",
        accessModes: current.spec?.accessModes ?? ["ReadWriteOnce"],
        capacity: { storage: current.spec?.resources?.requests?.storage ?? "1Gi" }
      }
    }))
  }

  private inUse(namespace: string, name: string) {
    return this.store.list(Pods, namespace).some((pod) =>
      (pod.spec?.volumes ?? []).some((volume: { persistentVolumeClaim?: { claimName: string } }) =>
        volume.persistentVolumeClaim?.claimName === name
      )
    )
  }

  /** DELETE: gone now when no pod mounts it, otherwise marked for deletion (Terminating). */
  async delete(namespace: string, name: string): Promise<KObject> {
    const claim = this.store.get(PersistentVolumeClaims, namespace, name)
    const marked = claim.metadata.deletionTimestamp !== undefined
      ? claim
      : this.store.update(PersistentVolumeClaims, namespace, name, (current) => ({
        ...current,
        metadata: { ...current.metadata, deletionTimestamp: now() }
      }))
    await this.finalize()
    return marked
  }

  /** Remove the claims marked for deletion that no pod mounts any more (and their volumes). */
  async finalize() {
    const due = this.store.list(
      PersistentVolumeClaims,
      undefined,
      (claim) =>
        claim.metadata.deletionTimestamp !== undefined && !this.inUse(claim.metadata.namespace, claim.metadata.name)
    )
    for (const claim of due) {
      const { namespace, name } = claim.metadata
      await docker.getVolume(this.volumeOf(namespace, name)).remove().catch(() => {})
      this.store.remove(PersistentVolumeClaims, namespace, name)
    }
  }
}
