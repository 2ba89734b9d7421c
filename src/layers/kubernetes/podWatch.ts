/**
 * Following one pod through a client-node `Watch` (no polling: OpenHands polls every 2 s): each
 * change is judged as it arrives, until the judge returns a verdict. A watch the API server ends
 * (its timeout) is opened again; one that fails fails the effect. Interrupting aborts it.
 */
import type { V1Pod } from "@kubernetes/client-node"
import { Effect } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { Kube } from "./client.ts"
import { hasEnded, isReady, podReport, podTrouble } from "./startErrors.ts"

/** A verdict on a change (`ADDED`, `MODIFIED`, `DELETED`) of the pod, or undefined to keep watching. */
export type Judge<A> = (type: string, pod: V1Pod) => A | undefined

/** Watch the pod `name` (from `resourceVersion`: the changes after it) until `judge` gives a verdict. */
export const watchPod = <A>(
  kube: Kube,
  name: string,
  judge: Judge<A>,
  resourceVersion?: string
): Effect.Effect<A, RuntimeStartError> =>
  Effect.callback<A, RuntimeStartError>((resume) => {
    let controller: AbortController | undefined
    let done = false
    const finish = (result: Effect.Effect<A, RuntimeStartError>) => {
      if (done) return
      done = true
      controller?.abort()
      resume(result)
    }
    const open = (): void => {
      new kube.k8s.Watch(kube.config).watch(
        `/api/v1/namespaces/${kube.namespace}/pods`,
        { fieldSelector: `metadata.name=${name}`, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
        (type, pod: V1Pod) => {
          const verdict = done ? undefined : judge(type, pod)
          if (verdict !== undefined) finish(Effect.succeed(verdict))
        },
        (error: unknown) => {
          if (done) return
          // Ended by the API server (its watch timeout) without an error: watch on.
          if (error === null || error === undefined) return open()
          finish(Effect.fail(new RuntimeStartError({ message: `Watching pod ${name} failed: ${String(error)}` })))
        }
      ).then((c) => {
        controller = c
        if (done) c.abort()
      }, (error: unknown) =>
        finish(Effect.fail(new RuntimeStartError({ message: `Cannot watch pod ${name}: ${String(error)}` }))))
    }
    open()
    return Effect.sync(() => {
      done = true
      controller?.abort()
    })
  })

type Readiness = { readonly ready: V1Pod } | { readonly trouble: string }

/**
 * Until the pod is Running and Ready (its readiness probe on `/alive` passed): the pod, or a
 * `RuntimeStartError` naming its reason, events and log (startErrors.ts).
 */
export const waitUntilReady = Effect.fn("waitUntilReady")(function*(kube: Kube, name: string) {
  const outcome = yield* watchPod<Readiness>(kube, name, (type, pod) => {
    if (type === "DELETED") return { trouble: "the pod was deleted" }
    if (pod.status?.phase === "Running" && isReady(pod)) return { ready: pod }
    const trouble = podTrouble(pod)
    return trouble === undefined ? undefined : { trouble }
  })
  if ("ready" in outcome) return outcome.ready
  const report = yield* podReport(kube, name)
  return yield* new RuntimeStartError({ message: `The pod ${name} did not start: ${outcome.trouble}.${report}` })
})

/**
 * Completes when the pod stops under its runtime: it ended, or was deleted, while `expected()` is
 * false (pause deletes it on purpose, and resume makes a new one of the same name).
 */
export const podStopped = (kube: Kube, name: string, expected: () => boolean): Effect.Effect<void> =>
  watchPod(kube, name, (type, pod) => !expected() && (type === "DELETED" || hasEnded(pod)) ? true : undefined).pipe(
    Effect.asVoid,
    // A watch that cannot be opened again is a lost sight of the pod: reported as a stop.
    Effect.ignore
  )
