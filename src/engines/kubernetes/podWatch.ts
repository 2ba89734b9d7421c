/**
 * Following one pod by a watch (no polling: OpenHands polls every 2 s): its state, then each
 * change, is judged as it arrives, until the judge returns a verdict. A watch the API server ends
 * is listed and opened again (watchState.ts); one that fails fails the effect. Interrupting aborts it.
 */
import type { V1Pod } from "@kubernetes/client-node"
import { Clock, Data, Duration, Effect, Option, Stream } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { type Kube, readPodOrMissing } from "./client.ts"
import { hasEnded, isReady, podReport, type PodTrouble, podTroubleOf } from "./startErrors.ts"

/** A verdict on the pod's state (undefined: it does not exist), or undefined to keep watching. */
export type Judge<A> = (pod: V1Pod | undefined) => A | undefined

/**
 * Follow the pod `name` (its state now, then after every change: watchState.ts, loaded with
 * client-node when first used) until `judge` gives a verdict.
 */
export const watchPod = <A>(kube: Kube, name: string, judge: Judge<A>): Effect.Effect<A, RuntimeStartError> =>
  Effect.promise(() => import("./watchState.ts")).pipe(
    Effect.flatMap(({ POD, watchState }) =>
      watchState<V1Pod>(kube.config, POD, kube.namespace, name).pipe(
        Stream.map(judge),
        Stream.filter((verdict): verdict is A => verdict !== undefined),
        Stream.runHead
      )
    ),
    Effect.flatMap((verdict) =>
      Option.match(verdict, {
        onNone: () => Effect.fail(new RuntimeStartError({ message: `Watching pod ${name} ended` })),
        onSome: Effect.succeed
      })
    ),
    Effect.mapError((error) =>
      error._tag === "RuntimeStartError"
        ? error
        : new RuntimeStartError({ message: `Watching pod ${name} failed: ${error.message}` })
    )
  )

type Readiness = { readonly ready: V1Pod } | { readonly trouble: PodTrouble }

/** A pod that will not become ready: its name, why (as data), and its events and log (startErrors.ts). */
export class PodNotStarted extends Data.TaggedError("PodNotStarted")<{
  readonly pod: string
  readonly trouble: PodTrouble
  /** Its last log lines. */
  readonly output: string
  /** `The pod <name> did not start: <Reason: detail>.`, its events and its last log lines. */
  readonly message: string
}> {}

/**
 * Until the pod is Running and Ready (its readiness probe on `/alive` passed): the pod, or a
 * `PodNotStarted` naming its reason, events and log (startErrors.ts). A trouble that may pass
 * (no node yet, a failed pull) is waited out until `deadline` after `since` (when the pod was
 * created, on the Clock), then reported as the last one seen.
 */
export const waitUntilReady = Effect.fn("waitUntilReady")(function*(
  kube: Kube,
  name: string,
  deadline: Duration.Input,
  since: number
) {
  // The deadline counts from the pod's creation, not from this watch: the session's other objects
  // (service, ingress) are made in between, and the pod's time to start is what it bounds.
  const elapsed = Duration.millis((yield* Clock.currentTimeMillis) - since)
  const left = Duration.max(Duration.zero, Duration.subtract(Duration.fromInputUnsafe(deadline), elapsed))
  // What the watch showed last that may pass, for the deadline's message.
  let last: PodTrouble | undefined
  const outcome = yield* watchPod<Readiness>(kube, name, (pod) => {
    if (pod === undefined) return { trouble: { kind: "other", text: "the pod was deleted" } }
    if (pod.status?.phase === "Running" && isReady(pod)) return { ready: pod }
    const trouble = podTroubleOf(pod)
    if (trouble?.passing === true) last = trouble
    return trouble === undefined || trouble.passing === true ? undefined : { trouble }
  }).pipe(
    Effect.timeoutOrElse({
      duration: left,
      orElse: () =>
        // The pod as it is now, read once: the watch may not have relayed its latest change yet.
        readPodOrMissing(kube, name).pipe(
          Effect.orElseSucceed(() => undefined),
          Effect.map((pod): Readiness => {
            const now = pod === undefined ? undefined : podTroubleOf(pod)
            const seen = now?.passing === true ? now : last
            const after = Duration.format(Duration.fromInputUnsafe(deadline))
            return {
              trouble: seen === undefined
                ? { kind: "other", text: `not ready within ${after}` }
                : { ...seen, text: `${seen.text} (still so after ${after})` }
            }
          })
        )
    })
  )
  if ("ready" in outcome) return outcome.ready
  const report = yield* podReport(kube, name)
  return yield* new PodNotStarted({
    pod: name,
    trouble: outcome.trouble,
    output: report.output,
    message: `The pod ${name} did not start: ${outcome.trouble.text}.${report.text}`
  })
})

/**
 * Completes when the pod stops under its runtime: it ended, or was deleted, while `expected()` is
 * false (pause deletes it on purpose, and resume makes a new one of the same name).
 */
export const podStopped = (kube: Kube, name: string, expected: () => boolean): Effect.Effect<void> =>
  watchPod(kube, name, (pod) => !expected() && (pod === undefined || hasEnded(pod)) ? true : undefined).pipe(
    Effect.asVoid,
    // A watch that cannot be opened again is a lost sight of the pod: reported as a stop.
    Effect.ignore
  )
