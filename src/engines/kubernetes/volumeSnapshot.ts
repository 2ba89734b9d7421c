/**
 * VolumeSnapshots (`snapshot.storage.k8s.io/v1`, the CSI external-snapshotter's CRDs) of a
 * workspace PVC: whether the cluster can take one (the API served, and a VolumeSnapshotClass named
 * or marked default), the object, and waiting for `status.readyToUse` or reading its
 * `status.error`. A PVC made with one as its `dataSource` starts with the snapshot's files.
 */
import type { KubernetesObject, V1APIGroupList } from "@kubernetes/client-node"
import { Duration, Effect, Schedule } from "effect"
import { ProviderError, type ProviderReason } from "../../schema/errors.ts"
import { kubeCall as apiCall } from "./apiCall.ts"
import { type Kube, kubeCall, kubeCallOrMissing } from "./client.ts"
import type { Meta } from "./manifests.ts"

const GROUP = "snapshot.storage.k8s.io"
const VERSION = "v1"
const PLURAL = "volumesnapshots"

/** The kind, as the reaper lists it. */
export const VOLUME_SNAPSHOT = { apiVersion: `${GROUP}/${VERSION}`, kind: "VolumeSnapshot" } as const

/** The annotation that marks the cluster's default VolumeSnapshotClass. */
export const DEFAULT_CLASS_ANNOTATION = "snapshot.storage.kubernetes.io/is-default-class"

/** A VolumeSnapshot as read back. */
export interface VolumeSnapshotObject extends KubernetesObject {
  readonly spec?: { readonly source?: { readonly persistentVolumeClaimName?: string } }
  readonly status?: {
    readonly readyToUse?: boolean
    readonly error?: { readonly message?: string }
  }
}

/**
 * Whether this cluster takes VolumeSnapshots: `className` to set on them (undefined: the cluster's
 * default), or why not, in words that name what the cluster lacks.
 */
export type SnapshotSupport =
  | { readonly _tag: "Supported"; readonly className: string | undefined }
  | { readonly _tag: "Unsupported"; readonly why: string }

/** What the API groups (`/apis`) lack for VolumeSnapshots, or undefined when `snapshot.storage.k8s.io/v1` is served. */
export const missingSnapshotApi = (groups: V1APIGroupList): string | undefined => {
  const group = groups.groups.find((candidate) => candidate.name === GROUP)
  return group === undefined
    ? "the cluster serves no VolumeSnapshot API (snapshot.storage.k8s.io: install the CSI external-snapshotter's CRDs and controller)"
    : group.versions.some((version) => version.version === VERSION)
    ? undefined
    : `the cluster serves ${GROUP} only at ${
      group.versions.map((version) => version.version).join(", ")
    }, not ${VERSION} (upgrade the CSI external-snapshotter)`
}

/** Whether the cluster serves `snapshot.storage.k8s.io/v1` (by API discovery, which every authenticated user may read). */
const servesSnapshots = (kube: Kube) =>
  apiCall("discover API groups", () => kube.config.makeApiClient(kube.k8s.ApisApi).getAPIVersions()).pipe(
    Effect.map(missingSnapshotApi)
  )

/** The cluster's default VolumeSnapshotClass (cluster-scoped: reading it needs a ClusterRole), or why there is none. */
const defaultClass = (kube: Kube) =>
  apiCall(
    "list VolumeSnapshotClasses",
    () =>
      kube.config.makeApiClient(kube.k8s.CustomObjectsApi).listClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: "volumesnapshotclasses"
      }) as Promise<{ readonly items: ReadonlyArray<KubernetesObject> }>
  ).pipe(
    Effect.map((list) => {
      const found = list.items.find((item) => item.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === "true")
      return found === undefined
        ? { why: "the cluster has no default VolumeSnapshotClass: name one with volumeSnapshotClassName" }
        : { name: found.metadata?.name }
    }),
    Effect.catch((error) =>
      Effect.succeed({
        why: `volumeSnapshotClassName is not set and the cluster's default VolumeSnapshotClass could not be read (${
          error.status === 403 ? "a namespaced Role cannot list this cluster-scoped kind" : error.message
        }): name the class with volumeSnapshotClassName`
      })
    )
  )

/**
 * Whether the cluster takes VolumeSnapshots: the API served, and `className` given or a default
 * class found. Never fails: a discovery that fails is the reason given.
 */
export const snapshotSupport = Effect.fn("snapshotSupport")(function*(kube: Kube, className: string | undefined) {
  const missing = yield* servesSnapshots(kube).pipe(Effect.catch((error) => Effect.succeed(error.message)))
  if (missing !== undefined) return { _tag: "Unsupported", why: missing } satisfies SnapshotSupport
  if (className !== undefined) return { _tag: "Supported", className } satisfies SnapshotSupport
  const found = yield* defaultClass(kube)
  return ("why" in found
    ? { _tag: "Unsupported", why: found.why }
    : { _tag: "Supported", className: undefined }) satisfies SnapshotSupport
})

const api = (kube: Kube) => kube.config.makeApiClient(kube.k8s.CustomObjectsApi)
const where = (kube: Kube) => ({ group: GROUP, version: VERSION, plural: PLURAL, namespace: kube.namespace })

/** Create a VolumeSnapshot of the PVC `claimName`, of `className` (undefined: the cluster's default). */
export const createVolumeSnapshot = (kube: Kube, meta: Meta, claimName: string, className: string | undefined) =>
  kubeCall(`create VolumeSnapshot ${meta.name}`, () =>
    api(kube).createNamespacedCustomObject({
      ...where(kube),
      body: {
        apiVersion: VOLUME_SNAPSHOT.apiVersion,
        kind: VOLUME_SNAPSHOT.kind,
        metadata: { name: meta.name, labels: { ...meta.labels }, annotations: { ...meta.annotations } },
        spec: {
          ...(className === undefined ? {} : { volumeSnapshotClassName: className }),
          source: { persistentVolumeClaimName: claimName }
        }
      }
    }) as Promise<VolumeSnapshotObject>)

/** The VolumeSnapshot `name`, or undefined when there is none. */
export const readVolumeSnapshot = (kube: Kube, name: string) =>
  kubeCallOrMissing(
    `read VolumeSnapshot ${name}`,
    () => api(kube).getNamespacedCustomObject({ ...where(kube), name }) as Promise<VolumeSnapshotObject>
  )

/** Delete a VolumeSnapshot (gone already is fine). */
export const deleteVolumeSnapshot = (kube: Kube, name: string) =>
  kubeCallOrMissing(
    `delete VolumeSnapshot ${name}`,
    () => api(kube).deleteNamespacedCustomObject({ ...where(kube), name })
  ).pipe(Effect.asVoid)

/** The VolumeSnapshots matching `labelSelector`. */
export const listVolumeSnapshots = (kube: Kube, labelSelector: string) =>
  kubeCall(
    "list VolumeSnapshots",
    () =>
      api(kube).listNamespacedCustomObject({ ...where(kube), labelSelector }) as Promise<
        { readonly items: ReadonlyArray<VolumeSnapshotObject> }
      >
  ).pipe(Effect.map((list) => list.items))

/** Why a VolumeSnapshot cannot be used: missing, or failed (the snapshotter's `status.error`); undefined while fine. */
export const snapshotTrouble = (
  name: string,
  snapshot: VolumeSnapshotObject | undefined
): { readonly reason: ProviderReason; readonly message: string } | undefined =>
  snapshot === undefined
    ? { reason: "not-found", message: `the VolumeSnapshot ${name} does not exist` }
    : snapshot.status?.error?.message === undefined
    ? undefined
    : { reason: "unknown", message: `the VolumeSnapshot ${name} failed: ${snapshot.status.error.message}` }

/** A VolumeSnapshot that will not be ready, as the provider's error. */
const unusable = (name: string, trouble: { readonly reason: ProviderReason; readonly message: string }) =>
  new ProviderError({ provider: "Kubernetes", operation: `wait for VolumeSnapshot ${name}`, ...trouble })

/**
 * Wait until the VolumeSnapshot is `readyToUse` (the snapshotter copied the volume), at most
 * `deadline`; its error, or its going missing, fails at once with the snapshotter's words.
 */
export const waitReadyToUse = (kube: Kube, name: string, deadline: Duration.Input) =>
  readVolumeSnapshot(kube, name).pipe(
    Effect.flatMap((snapshot) => {
      const trouble = snapshotTrouble(name, snapshot)
      return trouble !== undefined
        ? Effect.fail(unusable(name, trouble))
        : Effect.succeed(snapshot?.status?.readyToUse === true)
    }),
    Effect.repeat({ schedule: Schedule.spaced("250 millis"), until: (ready) => ready }),
    Effect.timeoutOrElse({
      duration: deadline,
      orElse: () =>
        Effect.fail(
          unusable(name, {
            reason: "timeout",
            message: `the VolumeSnapshot ${name} is not readyToUse after ${
              Duration.format(Duration.fromInputUnsafe(deadline))
            }`
          })
        )
    })
  )
