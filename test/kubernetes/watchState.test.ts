/**
 * `watchState` (src/engines/kubernetes/watchState.ts) against the stand-in: it
 * starts with the current state (undefined when absent), follows every change,
 * and outlives client-node's 30 s inactivity abort of an idle watch (the stand-in
 * sends no bookmarks, so a watch on an absent pod is aborted once): a pod made
 * after that is still seen.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect, Fiber, Stream } from "effect"
import { watchState } from "../../src/engines/kubernetes/watchState.ts"
import { describeCluster, namespace, onStandIn, podImage } from "./lifecycle.ts"

const POD = { apiVersion: "v1", kind: "Pod", plural: "pods" }

describeCluster("watchState", () => {
  it.live(
    "reports absence, then the object made after an idle watch was aborted, then its deletion",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          const core = kc.makeApiClient(CoreV1Api)
          const states: Array<string> = []
          const watching = yield* watchState(kc, POD, namespace, "late").pipe(
            Stream.map((pod) => pod === undefined ? "absent" : `present ${pod.metadata?.name}`),
            Stream.changes,
            Stream.tap((state) => Effect.sync(() => void states.push(state))),
            Stream.takeUntil((state) => state === "absent" && states.length > 1),
            Stream.runDrain,
            Effect.forkChild
          )
          // Longer than client-node's 30 s inactivity limit: the first watch is aborted and opened again.
          yield* Effect.sleep("33 seconds")
          assert.deepStrictEqual(states, ["absent"])
          yield* Effect.promise(() =>
            core.createNamespacedPod({
              namespace,
              body: {
                metadata: { name: "late" },
                spec: { containers: [{ name: "main", image: podImage(), command: ["sleep", "300"] }] }
              }
            })
          )
          yield* Effect.sleep("1 second")
          assert.deepStrictEqual(states, ["absent", "present late"])
          yield* Effect.promise(() => core.deleteNamespacedPod({ name: "late", namespace }))
          yield* Fiber.join(watching).pipe(Effect.timeout("20 seconds"))
          assert.deepStrictEqual(states, ["absent", "present late", "absent"])
        })
      ),
    90_000
  )
})
