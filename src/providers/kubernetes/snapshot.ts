/**
 * Kubernetes's snapshots (services/Driver.ts `SnapshotVerbs`): a VolumeSnapshot of the session's
 * workspace PVC (engines/kubernetes/volumeSnapshot.ts), labelled as the session's other objects
 * are (the owner's Lease unless kept, so the reaper removes a dead owner's: reaper.ts), plus the
 * hosted runtime's snapshot and keep-alive tags. A session started from one gets a PVC with the
 * snapshot as its `dataSource` (session.ts). Only the workspace volume is copied: the pod's root
 * filesystem is the image's again (`keeps: "workspace"`). Offered only where the cluster serves
 * the API and has a class (`snapshotSupport`), and only for bare pods (a Sandbox's or a claim's
 * PVC is its controller's).
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { MANAGED_LABEL, resourceNames, sessionLabels } from "../../engines/kubernetes/labels.ts"
import {
  createVolumeSnapshot,
  deleteVolumeSnapshot,
  listVolumeSnapshots,
  type SnapshotSupport,
  type VolumeSnapshotObject,
  waitReadyToUse
} from "../../engines/kubernetes/volumeSnapshot.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import { ProviderError, type RuntimeStartError } from "../../schema/errors.ts"
import type { FoundSnapshot, SnapshotVerbs } from "../../services/Driver.ts"
import type { KubePod } from "./podLifecycle.ts"
import type { KubeContext } from "./session.ts"

/** The tags a VolumeSnapshot carries as labels; the owner's host and pid mean nothing here (the owner is a Lease). */
const LABELLED: ReadonlySet<string> = new Set([TAGS.managed, TAGS.session, TAGS.keepAlive, TAGS.snapshot])

/** A VolumeSnapshot as a found snapshot. */
const foundSnapshot = (object: VolumeSnapshotObject): FoundSnapshot => {
  const labels = object.metadata?.labels ?? {}
  return {
    id: object.metadata?.name ?? "",
    tags: Object.fromEntries(Object.entries(labels).filter(([key]) => LABELLED.has(key))),
    createdAt: new Date(object.metadata?.creationTimestamp ?? 0)
  }
}

/** A refused request as the provider's error (what `kubeCall`'s start error carries). */
const asProviderError = (operation: string) => (error: RuntimeStartError | ProviderError) =>
  error._tag === "ProviderError"
    ? error
    : error.provider ??
      new ProviderError({ provider: "Kubernetes", operation, reason: "unknown", message: error.message })

/** The snapshot verbs of a layer; `support` is what discovery found when it connected. */
export const kubeSnapshots = (ctx: KubeContext, support: SnapshotSupport): SnapshotVerbs<KubePod> => ({
  keeps: "workspace",
  unsupported: support._tag === "Unsupported"
    ? support.why
    : ctx.sandboxes === undefined
    ? undefined
    : "a Sandbox's or a claim's workspace PVC is its controller's: snapshots are taken of bare pods only (mode: pod)",
  take: Effect.fn("KubernetesRuntime.snapshot")(function*(pod: KubePod, tags: Readonly<Record<string, string>>) {
    const names = resourceNames(pod.sessionId)
    const kept = tags[TAGS.keepAlive] === "true"
    const name = `${names.pod}-snap-${randomBytes(4).toString("hex")}`
    const labels = {
      ...sessionLabels({
        sessionId: pod.sessionId,
        owner: kept ? undefined : ctx.lease.labels,
        extra: ctx.options.labels
      }),
      [TAGS.snapshot]: "true",
      [TAGS.keepAlive]: String(kept)
    }
    const operation = `snapshot PVC ${names.pvc}`
    const className = support._tag === "Supported" ? support.className : undefined
    const made = yield* createVolumeSnapshot(
      ctx.kube,
      { name, labels, annotations: ctx.options.annotations ?? {} },
      names.pvc,
      className
    ).pipe(Effect.mapError(asProviderError(operation)))
    // A snapshot that failed or never became ready is no snapshot: removed, whatever stopped the wait.
    yield* waitReadyToUse(ctx.kube, name, ctx.startDeadline).pipe(
      Effect.mapError(asProviderError(operation)),
      Effect.onError(() => Effect.ignore(deleteVolumeSnapshot(ctx.kube, name)))
    )
    return foundSnapshot(made)
  }),
  remove: (id) =>
    deleteVolumeSnapshot(ctx.kube, id).pipe(Effect.mapError(asProviderError(`delete VolumeSnapshot ${id}`))),
  find: (tags) => {
    // Only these tags are labels here (the owner is a Lease): nothing carries any other.
    if (support._tag === "Unsupported" || Object.keys(tags).some((tag) => !LABELLED.has(tag))) {
      return Effect.succeed([])
    }
    const selector = Object.entries({ ...tags, [MANAGED_LABEL]: "true", [TAGS.snapshot]: "true" })
      .map(([key, value]) => `${key}=${value}`)
      .join(",")
    return listVolumeSnapshots(ctx.kube, selector).pipe(
      Effect.map((items) => items.map(foundSnapshot)),
      Effect.mapError(asProviderError("list VolumeSnapshots"))
    )
  }
})
