/**
 * Creating a session's objects, each with its release in the current scope (run in reverse: the
 * ingress and service first, the pod, the key Secret, then the PVC only with `deleteWorkspace`):
 * an interrupted or failed start removes what it had made. `kept` (sandbox.keepRuntimeAlive)
 * leaves everything for a later `attach`.
 */
import type { V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node"
import { Effect } from "effect"
import type { Kube } from "./client.ts"
import { kubeCall, kubeCallOrMissing } from "./client.ts"
import { watchPod } from "./podWatch.ts"

/** How long a release waits for a deleted pod to be gone (its container stopped) before moving on. */
const DELETE_WAIT = "60 seconds"

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
  yield* onRelease(
    !remove,
    `delete PVC ${name}`,
    kubeCallOrMissing(
      `delete PVC ${name}`,
      () => kube.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: kube.namespace })
    )
  )
})

/** Create an object (`what`: "Secret x", "service y"), deleted on release unless kept. */
export const createReleased = Effect.fn("createReleased")(function*(
  what: string,
  create: () => Promise<unknown>,
  remove: () => Promise<unknown>,
  kept: boolean
) {
  yield* kubeCall(`create ${what}`, create)
  yield* onRelease(kept, `delete ${what}`, kubeCallOrMissing(`delete ${what}`, remove))
})

/** Create the pod `name` from `template`. */
export const createPod = (kube: Kube, name: string, template: V1PodTemplateSpec) =>
  kubeCall(
    `create pod ${name}`,
    () =>
      kube.core.createNamespacedPod({
        namespace: kube.namespace,
        body: { metadata: { ...template.metadata, name }, spec: template.spec! } satisfies V1Pod
      })
  )

/**
 * Delete the pod and wait until it is gone (its container stopped, its PVC free for the next
 * pod); the watch starts from a list, so a quick deletion is not missed.
 */
export const deletePod = Effect.fn("deletePod")(function*(kube: Kube, name: string) {
  const marked = yield* kubeCallOrMissing(
    `delete pod ${name}`,
    () => kube.core.deleteNamespacedPod({ name, namespace: kube.namespace, gracePeriodSeconds: 5 })
  )
  if (marked === undefined) return
  yield* watchPod(kube, name, (pod) => pod === undefined ? true : undefined).pipe(
    Effect.timeout(DELETE_WAIT),
    Effect.ignore
  )
})

/** Delete the pod on release (and wait for it to be gone). */
export const deletePodOnRelease = (kube: Kube, name: string, kept: boolean) =>
  onRelease(kept, `delete pod ${name}`, deletePod(kube, name))
