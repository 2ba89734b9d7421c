/**
 * A pod made from a template, and deleted until it is gone: what a session's pod, its pause and
 * resume (delete it, make it again), and the runtime API's sandboxes do alike.
 */
import type { V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node"
import { Effect } from "effect"
import { type Kube, kubeCall, kubeCallOrMissing } from "./client.ts"
import { watchPod } from "./podWatch.ts"

/**
 * How long a deletion waits for the pod to be gone (its container stopped) before moving on. A
 * current kubelet confirms a deletion seconds after the grace; a 1.20 or 1.21 kubelet only once its
 * container GC, a pass a minute, has removed the pod's sandbox, so up to 70 s after it, and a
 * resume that makes the pod again before that meets "object is being deleted".
 */
const DELETE_WAIT = "90 seconds"

/**
 * The grace every deletion of our pods gives them (a session's release, pause, the reaper): the
 * action server exits at SIGTERM at once, so this only bounds a wedged one. The pod's own default
 * (30 s) would keep a reaped orphan's pod, and the quota and PVC it holds, half a minute longer.
 */
export const POD_DELETE_GRACE_SECONDS = 5

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
    () =>
      kube.core.deleteNamespacedPod({ name, namespace: kube.namespace, gracePeriodSeconds: POD_DELETE_GRACE_SECONDS })
  )
  if (marked === undefined) return
  yield* watchPod(kube, name, (pod) => pod === undefined ? true : undefined).pipe(
    Effect.timeout(DELETE_WAIT),
    Effect.ignore
  )
})
