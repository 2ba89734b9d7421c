/**
 * The reaper: in one namespace, removes the objects labelled
 * `effect-sandbox.managed=true` whose owner (the Lease their `effect-sandbox.owner`
 * label names, ownerLease.ts) is provably gone, then the stale Leases
 * themselves. Proof is a Lease that is missing, or whose `renewTime` plus
 * `leaseDurationSeconds` lies in the past by the API server's clock (its `Date`
 * header) with a margin for the owner's clock skew; and the suspicion is
 * confirmed by reading the Lease again after a live owner would have renewed it
 * (twice its renewal period, at most its term). An owner whose clock lags the
 * server by more than the margin still renews, so its `renewTime` moves between
 * the two reads and it keeps its sandboxes.
 *
 * What it removes: SandboxClaims and Sandboxes (when the agent-sandbox CRDs are
 * served), pods, services, ingresses, NetworkPolicies and Secrets, PVCs only when they also
 * carry `effect-sandbox.delete-workspace=true` (workspaces are kept by default), and
 * VolumeSnapshots (when the cluster serves them: the workspace's snapshots, snapshot.ts).
 * Objects without an owner label (kept alive on purpose) are never touched, and
 * neither are objects another object controls (a Sandbox's pod goes with its
 * Sandbox: deleting it would only make the controller create it again).
 */
import {
  ApisApi,
  CoordinationV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  type V1Lease
} from "@kubernetes/client-node"
import { Duration, Effect, Schedule } from "effect"
import { detect, SANDBOX, SANDBOX_CLAIM } from "../../engines/kubernetes/agentSandbox.ts"
import { kubeCall, kubeCallUnlessGone, listObjects } from "../../engines/kubernetes/apiCall.ts"
import { DELETE_WORKSPACE_LABEL, MANAGED_LABEL, OWNER_LABEL } from "../../engines/kubernetes/labels.ts"
import { POD_DELETE_GRACE_SECONDS } from "../../engines/kubernetes/pods.ts"
import { missingSnapshotApi, VOLUME_SNAPSHOT } from "../../engines/kubernetes/volumeSnapshot.ts"
import type { KubeReaperOptions } from "./options.ts"
import { RENEW_EVERY_ANNOTATION } from "./ownerLease.ts"

interface ReapedKind {
  readonly apiVersion: string
  readonly kind: string
  readonly agentSandbox?: boolean
  /** Served only where the cluster has the VolumeSnapshot API. */
  readonly volumeSnapshot?: boolean
  /** Further labels an object of this kind must carry to be reaped. */
  readonly alsoLabelled?: string
}

/** In removal order: claims and Sandboxes first, so their controllers do not recreate what goes next. */
const KINDS: ReadonlyArray<ReapedKind> = [
  { ...SANDBOX_CLAIM, agentSandbox: true },
  { ...SANDBOX, agentSandbox: true },
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "networking.k8s.io/v1", kind: "Ingress" },
  { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "v1", kind: "PersistentVolumeClaim", alsoLabelled: `${DELETE_WORKSPACE_LABEL}=true` },
  // Snapshots of the workspace (snapshot.ts): a kept one carries no owner label.
  { ...VOLUME_SNAPSHOT, volumeSnapshot: true }
]

/** What the reaper reads from a Lease. */
interface LeaseState {
  readonly renewedAt: number
  readonly termMs: number
  readonly renewEveryMs: number
}

const leaseState = (lease: V1Lease): LeaseState => {
  const spec = lease.spec ?? {}
  const stamp = spec.renewTime ?? spec.acquireTime ?? lease.metadata?.creationTimestamp
  const termMs = (spec.leaseDurationSeconds ?? 0) * 1000
  const renewEvery = Number(lease.metadata?.annotations?.[RENEW_EVERY_ANNOTATION])
  return {
    // client-node hands MicroTime over as the server's string, typed as a Date: both parse.
    renewedAt: stamp === undefined ? 0 : new Date(stamp as unknown as string).getTime(),
    termMs,
    renewEveryMs: Number.isFinite(renewEvery) && renewEvery > 0 ? renewEvery : termMs
  }
}

/** The namespace's owner Leases and the API server's clock when it listed them. */
const readLeases = Effect.fn("readLeases")(function*(kc: KubeConfig, namespace: string) {
  const info = yield* kubeCall(
    `list leases in ${namespace}`,
    () =>
      kc.makeApiClient(CoordinationV1Api).listNamespacedLeaseWithHttpInfo({
        namespace,
        labelSelector: `${MANAGED_LABEL}=true`
      })
  )
  const date = Date.parse(info.headers["date"] ?? "")
  const leases = new Map(info.data.items.map((lease) => [lease.metadata?.name ?? "", leaseState(lease)] as const))
  return { leases, serverNow: Number.isNaN(date) ? Date.now() : date }
})

/** Whether the object is controlled by another (its controller's removal takes it along). */
const controlled = (object: KubernetesObject) => (object.metadata?.ownerReferences ?? []).some((ref) => ref.controller)

/** The owned objects of one kind in the namespace; a kind that cannot be listed is logged and skipped. */
const ownedObjects = (api: KubernetesObjectApi, namespace: string, kind: ReapedKind) =>
  kubeCall(`list ${kind.kind} in ${namespace}`, () =>
    listObjects(api, kind, namespace, {
      labelSelector: [
        `${MANAGED_LABEL}=true`,
        OWNER_LABEL,
        ...(kind.alsoLabelled === undefined ? [] : [kind.alsoLabelled])
      ]
        .join(",")
    })).pipe(
      Effect.map((list) =>
        list.items.filter((object) => !controlled(object)).map((object) => ({
          apiVersion: kind.apiVersion,
          kind: kind.kind,
          metadata: { name: object.metadata?.name ?? "", namespace },
          owner: object.metadata?.labels?.[OWNER_LABEL] ?? ""
        }))
      ),
      Effect.catch((error) => Effect.as(Effect.logWarning(`reaper: ${error.message}`), []))
    )

/** Delete one object and log it; what was removed (nothing when it was gone already or refused). */
const removeOne = (what: string, why: string, call: () => Promise<unknown>) =>
  kubeCallUnlessGone(`delete ${what}`, call).pipe(
    Effect.flatMap((answer) =>
      answer === undefined ? Effect.succeed([]) : Effect.as(Effect.logInfo(`reaped ${what}: ${why}`), [what])
    ),
    Effect.catch((error) => Effect.as(Effect.logWarning(`reaper: ${error.message}`), []))
  )

/**
 * One pass over `namespace`: remove the objects of owners proven gone, then their stale
 * Leases. Returns what it removed (`Kind/name`). Never fails: a request refused now is
 * retried at the next pass, and logged.
 */
export const reapOrphans = Effect.fn("reapOrphans")(function*(
  kc: KubeConfig,
  namespace: string,
  options: KubeReaperOptions = {}
) {
  const skewMs = Duration.toMillis(options.clockSkew ?? "10 seconds")
  const missingGraceMs = Duration.toMillis(options.missingLeaseGrace ?? "20 seconds")
  const api = KubernetesObjectApi.makeApiClient(kc)
  const { sandboxes, claims } = yield* detect(kc).pipe(
    Effect.orElseSucceed(() => ({ sandboxes: false, claims: false }))
  )
  const volumeSnapshots = yield* kubeCall("discover API groups", () => kc.makeApiClient(ApisApi).getAPIVersions()).pipe(
    Effect.map((groups) => missingSnapshotApi(groups) === undefined),
    Effect.orElseSucceed(() => false)
  )
  const kinds = KINDS.filter((kind) =>
    kind.volumeSnapshot === true
      ? volumeSnapshots
      : kind.agentSandbox !== true || (kind.kind === "Sandbox" ? sandboxes : claims)
  )
  const before = yield* readLeases(kc, namespace)
  const stale = (lease: LeaseState, now: number) => lease.renewedAt + lease.termMs + skewMs < now
  const suspectedOwner = (owner: string) => {
    const lease = before.leases.get(owner)
    return lease === undefined || stale(lease, before.serverNow)
  }
  const objects = (yield* Effect.forEach(kinds, (kind) => ownedObjects(api, namespace, kind))).flat()
  const suspects = objects.filter((object) => suspectedOwner(object.owner))
  const staleLeases = [...before.leases].filter(([, lease]) => stale(lease, before.serverNow)).map(([name]) => name)
  if (suspects.length === 0 && staleLeases.length === 0) return []

  // Confirm: a live owner renews within twice its period (capped by its term); a missing Lease gets a grace.
  const waits = [...new Set([...suspects.map((object) => object.owner), ...staleLeases])].map((owner) => {
    const lease = before.leases.get(owner)
    return lease === undefined ? missingGraceMs : Math.min(2 * lease.renewEveryMs, lease.termMs)
  })
  yield* Effect.sleep(Math.max(...waits))
  const after = yield* readLeases(kc, namespace)
  const gone = (owner: string) => {
    const then = before.leases.get(owner)
    const now = after.leases.get(owner)
    if (now === undefined) return true
    return then !== undefined && now.renewedAt === then.renewedAt && stale(now, after.serverNow)
  }

  const orphans = suspects.filter((object) => gone(object.owner))
  const removed: Array<string> = []
  // Kind by kind, in KINDS order; the objects of one kind in parallel.
  for (const kind of kinds) {
    removed.push(
      ...(yield* Effect.forEach(
        orphans.filter((object) => object.kind === kind.kind),
        (object) =>
          removeOne(
            `${object.kind}/${object.metadata.name}`,
            `owner lease ${object.owner} is ${after.leases.has(object.owner) ? "stale" : "missing"}`,
            () => api.delete(object, undefined, undefined, object.kind === "Pod" ? POD_DELETE_GRACE_SECONDS : undefined)
          ),
        { concurrency: 4 }
      )).flat()
    )
  }
  const leases = kc.makeApiClient(CoordinationV1Api)
  removed.push(
    ...(yield* Effect.forEach(
      staleLeases.filter((name) => after.leases.has(name) && gone(name)),
      (name) => removeOne(`Lease/${name}`, "not renewed", () => leases.deleteNamespacedLease({ name, namespace })),
      { concurrency: 4 }
    )).flat()
  )
  return removed
}, Effect.catch((error) => Effect.as(Effect.logWarning(`reaper: ${error.message}`), [] as ReadonlyArray<string>)))

/** Reap now and then every `every`, in the background, for as long as the scope lives. */
export const startKubeReaper = (
  kc: KubeConfig,
  namespace: string,
  every: Duration.Input,
  options: KubeReaperOptions = {}
) =>
  reapOrphans(kc, namespace, options).pipe(
    Effect.repeat(Schedule.spaced(every)),
    Effect.forkScoped,
    Effect.asVoid
  )
