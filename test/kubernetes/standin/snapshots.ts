/**
 * The CSI external-snapshotter and a snapshotting CSI driver (`snapshot.storage.k8s.io/v1`):
 * VolumeSnapshotClasses (cluster-scoped, given at start, one marked default by the
 * `snapshot.storage.kubernetes.io/is-default-class` annotation), and VolumeSnapshots of PVCs,
 * `readyToUse: false` until the claim's Docker volume is copied into one of the snapshot's, then
 * true (with `restoreSize`, `creationTime`, `boundVolumeSnapshotContentName`). As the
 * snapshotter does, a snapshot whose class does not exist, whose PVC does not exist or is not
 * Bound gets `status.error` (and stays not ready). A PVC with a VolumeSnapshot as its `dataSource`
 * stays Pending until that snapshot exists and is ready (the provisioner retries), then is filled
 * with a copy of it (volumes.ts `fillFrom`).
 *
 * Modelled simply: deleting a VolumeSnapshot removes its copy at once, also while a PVC made from
 * it is still Pending (that PVC then waits for a snapshot of that name again); on a cluster the
 * content may outlive it (`deletionPolicy: Retain`). The copy runs in a short-lived container of
 * the image of a pod that mounts the source PVC (the stand-in pulls nothing): a snapshot of a PVC
 * no pod mounts gets `status.error` saying so.
 */
import { docker, dockerName, labelsOf } from "./docker.ts"
import { PersistentVolumeClaims, Pods, VolumeSnapshotClasses, VolumeSnapshots } from "./resources.ts"
import { type KObject, type NewObject, now, type Store } from "./store.ts"

export const DEFAULT_CLASS_ANNOTATION = "snapshot.storage.kubernetes.io/is-default-class"

/** A VolumeSnapshotClass the stand-in has: its name, and whether it is the default. */
export interface SnapshotClass {
  readonly name: string
  readonly default?: boolean
}

/** Where a ready snapshot's files are: its Docker volume, and the image that copies them. */
interface Content {
  readonly volume: string
  readonly image: string
}

/** Copy one Docker volume into another in a short-lived container of `image` (as root: owners and modes kept). */
export const copyVolume = async (instance: string, image: string, from: string, to: string) => {
  const container = await docker.createContainer({
    Image: image,
    User: "0:0",
    Entrypoint: ["sh", "-c", "cp -a /from/. /to/"],
    Cmd: [],
    Labels: labelsOf(instance),
    NetworkDisabled: true,
    HostConfig: { Binds: [`${from}:/from:ro`, `${to}:/to`] }
  })
  try {
    await container.start()
    const { StatusCode } = await container.wait() as { StatusCode: number }
    if (StatusCode !== 0) throw new Error(`copying ${from} to ${to} exited ${StatusCode}`)
  } finally {
    await container.remove({ force: true }).catch(() => {})
  }
}

export class SnapshotController {
  private readonly contents = new Map<string, Content>()
  private readonly store: Store
  private readonly instance: string
  private readonly volumeOf: (namespace: string, claim: string) => string
  constructor(
    store: Store,
    instance: string,
    volumeOf: (namespace: string, claim: string) => string,
    classes: ReadonlyArray<SnapshotClass>
  ) {
    this.store = store
    this.instance = instance
    this.volumeOf = volumeOf
    for (const { name, default: isDefault } of classes) {
      store.create(VolumeSnapshotClasses, "", {
        metadata: { name, annotations: isDefault === true ? { [DEFAULT_CLASS_ANNOTATION]: "true" } : {} },
        driver: "standin.csi.k8s.io",
        deletionPolicy: "Delete"
      })
    }
  }

  private key = (namespace: string, name: string) => `${namespace}/${name}`

  /** POST: stored not ready; the snapshotter's work follows. */
  create(namespace: string, body: NewObject): KObject {
    const snapshot = this.store.create(VolumeSnapshots, namespace, { ...body, status: { readyToUse: false } })
    setImmediate(() => void this.take(namespace, snapshot))
    return snapshot
  }

  private setStatus(namespace: string, snapshot: KObject, status: object) {
    if (this.store.find(VolumeSnapshots, namespace, snapshot.metadata.name)?.metadata.uid !== snapshot.metadata.uid) {
      return
    }
    this.store.update(VolumeSnapshots, namespace, snapshot.metadata.name, (current) => ({
      ...current,
      status: { ...current.status, ...status }
    }))
  }

  private fail(namespace: string, snapshot: KObject, message: string) {
    this.setStatus(namespace, snapshot, { readyToUse: false, error: { message, time: now() } })
  }

  /** The class a snapshot names, else the default; undefined: none (the snapshotter's error). */
  private classOf(snapshot: KObject): string | undefined {
    const named = snapshot.spec?.volumeSnapshotClassName as string | undefined
    const classes = this.store.list(VolumeSnapshotClasses, undefined)
    return named === undefined
      ? classes.find((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true")?.metadata.name
      : classes.find((c) => c.metadata.name === named)?.metadata.name
  }

  private async take(namespace: string, snapshot: KObject) {
    const { name } = snapshot.metadata
    const named = snapshot.spec?.volumeSnapshotClassName as string | undefined
    if (this.classOf(snapshot) === undefined) {
      return this.fail(
        namespace,
        snapshot,
        named === undefined
          ? "Failed to set default snapshot class with error cannot find default snapshot class"
          : `Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "${named}" not found`
      )
    }
    const claimName = snapshot.spec?.source?.persistentVolumeClaimName as string | undefined
    const claim = claimName === undefined ? undefined : this.store.find(PersistentVolumeClaims, namespace, claimName)
    if (claim === undefined) {
      return this.fail(
        namespace,
        snapshot,
        `failed to get input parameters to create snapshot ${name}: "failed to retrieve PVC ${claimName} from the lister: \\"persistentvolumeclaim \\\\\\"${claimName}\\\\\\" not found\\""`
      )
    }
    if (claim.status?.phase !== "Bound") {
      return this.fail(
        namespace,
        snapshot,
        `the PVC ${claimName} is not yet bound to a PV, will not attempt to take a snapshot`
      )
    }
    const image = this.store.list(Pods, namespace).find((pod) =>
      (pod.spec?.volumes ?? []).some((volume: { persistentVolumeClaim?: { claimName: string } }) =>
        volume.persistentVolumeClaim?.claimName === claimName
      )
    )?.spec?.containers?.[0]?.image as string | undefined
    if (image === undefined) {
      return this.fail(namespace, snapshot, `stand-in: no pod mounts ${claimName}, so no image to copy it with`)
    }
    const volume = dockerName(this.instance, namespace, "snap", name)
    try {
      await docker.createVolume({ Name: volume, Labels: labelsOf(this.instance) })
      await copyVolume(this.instance, image, this.volumeOf(namespace, claimName!), volume)
    } catch (error) {
      return this.fail(namespace, snapshot, `stand-in: ${String(error)}`)
    }
    if (this.store.find(VolumeSnapshots, namespace, name)?.metadata.uid !== snapshot.metadata.uid) {
      return void await docker.getVolume(volume).remove().catch(() => {})
    }
    this.contents.set(this.key(namespace, name), { volume, image })
    this.setStatus(namespace, snapshot, {
      readyToUse: true,
      creationTime: now(),
      restoreSize: claim.status?.capacity?.storage ?? "1Gi",
      boundVolumeSnapshotContentName: `snapcontent-${snapshot.metadata.uid}`
    })
  }

  /** DELETE: gone now, its copy with it. */
  async delete(namespace: string, name: string): Promise<KObject | undefined> {
    const removed = this.store.remove(VolumeSnapshots, namespace, name)
    const content = this.contents.get(this.key(namespace, name))
    this.contents.delete(this.key(namespace, name))
    if (content !== undefined) await docker.getVolume(content.volume).remove().catch(() => {})
    return removed
  }

  /**
   * Resolves with the snapshot `name`'s content once it exists and is ready: a PVC's provisioner
   * waits for it (and for one that does not exist yet); never settles while it does not.
   */
  readyContent(namespace: string, name: string): Promise<Content> {
    return new Promise((resolve) => {
      const check = () => {
        const content = this.contents.get(this.key(namespace, name))
        const snapshot = this.store.find(VolumeSnapshots, namespace, name)
        if (content === undefined || snapshot?.status?.readyToUse !== true) return false
        resolve(content)
        return true
      }
      if (check()) return
      const stop = this.store.subscribe((change) => {
        if (change.object.kind === "VolumeSnapshot" && check()) setImmediate(stop)
      })
    })
  }
}
