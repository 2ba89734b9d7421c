/**
 * Creating a session's objects, each with its deletion in the current scope (run in reverse: the
 * ingress and service first, the pod, the key Secret, then the PVC only with `deleteWorkspace`):
 * closing it (a failed or interrupted start, `destroy`) removes what was made.
 */
import { Effect } from "effect"
import type { Kube } from "../../engines/kubernetes/client.ts"
import { kubeCall, kubeCallOrMissing } from "../../engines/kubernetes/client.ts"
import { deletePod } from "../../engines/kubernetes/pods.ts"

/** Run `release` when the scope closes, unless the objects are kept; its failure is logged, never raised. */
export const onRelease = (kept: boolean, what: string, release: Effect.Effect<unknown, unknown>) =>
  kept ? Effect.void : Effect.addFinalizer(() =>
    release.pipe(
      Effect.catchCause((cause) => Effect.logWarning(`KubernetesRuntime: cannot ${what}`, cause))
    )
  )

/** Create the object unless it exists (a PVC kept from an earlier session of the same id is used again). */
export const ensureClaim = Effect.fn("ensureClaim")(function*(
  kube: Kube,
  claim: Parameters<Kube["core"]["createNamespacedPersistentVolumeClaim"]>[0]["body"],
  remove: boolean
) {
  const name = claim.metadata!.name!
  const existing = yield* kubeCallOrMissing(
    `read PVC ${name}`,
    () => kube.core.readNamespacedPersistentVolumeClaim({ name, namespace: kube.namespace })
  )
  if (existing === undefined) {
    yield* kubeCall(
      `create PVC ${name}`,
      () => kube.core.createNamespacedPersistentVolumeClaim({ namespace: kube.namespace, body: claim })
    )
  }
  yield* onRelease(!remove, `delete PVC ${name}`, deleteClaim(kube, name))
})

/** Delete a workspace PVC (gone already is fine). */
export const deleteClaim = (kube: Kube, name: string) =>
  kubeCallOrMissing(
    `delete PVC ${name}`,
    () => kube.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: kube.namespace })
  )

/** Create an object (`what`: "Secret x", "service y"), deleted on release. */
export const createReleased = Effect.fn("createReleased")(function*(
  what: string,
  create: () => Promise<unknown>,
  remove: () => Promise<unknown>
) {
  yield* kubeCall(`create ${what}`, create)
  yield* onRelease(false, `delete ${what}`, kubeCallOrMissing(`delete ${what}`, remove))
})

/** Delete the pod on release (and wait for it to be gone). */
export const deletePodOnRelease = (kube: Kube, name: string) =>
  onRelease(false, `delete pod ${name}`, deletePod(kube, name))
