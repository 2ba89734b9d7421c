/**
 * The owner's heartbeat on a cluster: a `coordination.k8s.io/v1` Lease per
 * runtime layer instance, renewed while the layer's scope lives and deleted
 * when it closes. Every object the runtime creates carries `OWNER_LABEL` naming
 * this Lease; the reaper (reaper.ts) removes the objects whose Lease is gone or
 * was not renewed within `leaseDurationSeconds`. That is the only proof of a
 * dead owner it acts on: pids and hosts mean nothing across a cluster, so the
 * holder identity (host/pid) is for people reading `kubectl get lease`.
 *
 * The same heartbeat pushes forward the agent-sandbox `shutdownTime` of the
 * Sandboxes and SandboxClaims registered with `keepAlive`: they expire on the
 * cluster's side, by the agent-sandbox controller, once the owner stops
 * renewing, even when no reaper ever runs again in the namespace.
 *
 * Default terms (renew every 10 s, stale after 60 s): an apiserver round trip
 * is milliseconds, but a busy owner (a stalled event loop, a GC pause, a
 * throttled client under API priority and fairness) must not lose its
 * sandboxes, so the lease survives five missed renewals; and 10 s keeps the
 * write load of many owners small (one PATCH each per beat, as a kubelet's
 * node lease). An orphan lives at most about a minute plus the reaper's period.
 */
import {
  CoordinationV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime
} from "@kubernetes/client-node"
import { Duration, Effect, Ref, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { type KubeApiError, kubeCall, kubeCallUnlessGone } from "../../engines/kubernetes/apiCall.ts"
import { startError } from "../../engines/kubernetes/client.ts"
import { MANAGED_LABEL, OWNER_LABEL } from "../../engines/kubernetes/labels.ts"
import type { KubeOwnerLeaseOptions } from "./options.ts"

/** On the Lease: its renewal period, so the reaper knows how long a live owner takes to renew. */
export const RENEW_EVERY_ANNOTATION = "effect-sandbox.renew-every-ms"

/** Owner leases are named `effect-sandbox-owner-<random>`. */
export const LEASE_NAME_PREFIX = "effect-sandbox-owner-"

/** An agent-sandbox object whose `shutdownTime` the heartbeat keeps in the future. */
export interface Expiring {
  readonly kind: "Sandbox" | "SandboxClaim"
  readonly name: string
}

export interface KubeOwnerLease {
  readonly name: string
  readonly namespace: string
  /** The labels every object this owner creates carries: managed, and owned by this Lease. */
  readonly labels: Readonly<Record<string, string>>
  /** The `shutdownTime` to create a Sandbox with: one lease term from now. */
  readonly shutdownTime: () => string
  /** Renew `target`'s `shutdownTime` with every heartbeat while the calling scope lives. */
  readonly keepAlive: (target: Expiring) => Effect.Effect<void, never, Scope.Scope>
}

/** Where each agent-sandbox kind keeps its expiry, as a merge patch. */
const expiryPatch = (target: Expiring, shutdownTime: string) =>
  target.kind === "Sandbox"
    ? { group: "agents.x-k8s.io", plural: "sandboxes", body: { spec: { shutdownTime } } }
    : { group: "extensions.agents.x-k8s.io", plural: "sandboxclaims", body: { spec: { lifecycle: { shutdownTime } } } }

/** A failed beat is logged and tried again at the next one; until then the Lease ages. */
const warn = (error: KubeApiError) => Effect.logWarning(`owner heartbeat (retried next beat): ${error.message}`)

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)

/**
 * Create the owner's Lease and keep it renewed while the scope lives (a scoped fiber);
 * it is deleted when the scope closes. Fails with a RuntimeStartError when the Lease cannot
 * be created (no `create` on leases in the namespace, say): without it nothing is reapable.
 */
export const acquireKubeOwnerLease = Effect.fn("acquireKubeOwnerLease")(function*(
  kc: KubeConfig,
  namespace: string,
  options: KubeOwnerLeaseOptions = {}
) {
  const renewEveryMs = Duration.toMillis(options.renewEvery ?? "10 seconds")
  const leaseDurationSeconds = Math.max(1, Math.ceil(Duration.toSeconds(options.staleAfter ?? "60 seconds")))
  const leases = kc.makeApiClient(CoordinationV1Api)
  const custom = kc.makeApiClient(CustomObjectsApi)
  const name = `${LEASE_NAME_PREFIX}${randomBytes(5).toString("hex")}`
  const labels = { [MANAGED_LABEL]: "true", [OWNER_LABEL]: name }
  const body = () => {
    const now = new V1MicroTime()
    return {
      metadata: {
        name,
        labels: { [MANAGED_LABEL]: "true" },
        annotations: { [RENEW_EVERY_ANNOTATION]: String(renewEveryMs) }
      },
      spec: {
        holderIdentity: `${hostname()}/${process.pid}`,
        leaseDurationSeconds,
        acquireTime: now,
        renewTime: now
      }
    }
  }
  const create = kubeCall(`create lease ${name}`, () => leases.createNamespacedLease({ namespace, body: body() }))
  yield* Effect.acquireRelease(
    create.pipe(Effect.mapError((error) =>
      startError(
        error,
        `Cannot create the owner lease in namespace ${namespace} (the runtime needs create, patch, list and delete on coordination.k8s.io leases): ${error.message}`
      )
    )),
    () =>
      kubeCallUnlessGone(`delete lease ${name}`, () => leases.deleteNamespacedLease({ name, namespace })).pipe(
        Effect.catch((error) => Effect.logWarning(`cannot delete the owner lease: ${error.message}`))
      )
  )
  const expiring = yield* Ref.make<ReadonlyArray<Expiring>>([])
  const shutdownTime = () => new Date(Date.now() + leaseDurationSeconds * 1000).toISOString()

  // Written again when a reaper removed it while this owner was stalled past its term.
  const renewLease = kubeCallUnlessGone(
    `renew lease ${name}`,
    () => leases.patchNamespacedLease({ name, namespace, body: { spec: { renewTime: new V1MicroTime() } } }, mergePatch)
  ).pipe(
    Effect.flatMap((renewed) => renewed === undefined ? create : Effect.void),
    Effect.catch(warn)
  )
  const renewExpiry = (target: Expiring, until: string) => {
    const { body: patch, group, plural } = expiryPatch(target, until)
    return kubeCallUnlessGone(
      `renew the shutdownTime of ${plural} ${target.name}`,
      () =>
        custom.patchNamespacedCustomObject(
          { group, version: "v1alpha1", namespace, plural, name: target.name, body: patch },
          mergePatch
        )
    ).pipe(Effect.catch(warn))
  }
  /** One beat: renew the Lease, then push every kept-alive sandbox's expiry one term ahead (each failure on its own). */
  const beat = Effect.gen(function*() {
    yield* renewLease
    const until = shutdownTime()
    yield* Effect.forEach(yield* Ref.get(expiring), (target) => renewExpiry(target, until), { discard: true })
  })
  // The Lease was just written: the first renewal is one period away.
  yield* Effect.sleep(renewEveryMs).pipe(Effect.andThen(beat), Effect.forever, Effect.forkScoped)

  const keepAlive = (target: Expiring) =>
    Effect.acquireRelease(
      Ref.update(expiring, (all) => [...all, target]),
      () => Ref.update(expiring, (all) => all.filter((t) => t !== target))
    )
  return { name, namespace, labels, shutdownTime, keepAlive } satisfies KubeOwnerLease
})
