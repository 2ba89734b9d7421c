/**
 * `watchState` (src/engines/kubernetes/watchState.ts) against the stand-in: it
 * starts with the current state (undefined when absent), follows every change,
 * and outlives client-node's 30 s inactivity abort of an idle watch (bookmarks
 * every 10 s by default here keep it open; with them held off it is aborted once):
 * a pod made after that is still seen. A watch the server ends resumes from its
 * last bookmark without listing again; one told 410 Gone (its resourceVersion
 * compacted away) lists again.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node"
import { Effect, Fiber, Stream } from "effect"
import { watchState } from "../../src/engines/kubernetes/watchState.ts"
import { describeCluster, eventually, namespace, onStandIn, podImage } from "./lifecycle.ts"

const POD = { apiVersion: "v1", kind: "Pod", plural: "pods" }

/**
 * Follow the pod `name` in a fiber, pushing each distinct state ("absent", "present <name>") to
 * `states`, until it is absent again after having been seen.
 */
const follow = (kc: KubeConfig, name: string, states: Array<string>) =>
  watchState(kc, POD, namespace, name).pipe(
    Stream.map((pod) => pod === undefined ? "absent" : `present ${pod.metadata?.name}`),
    Stream.changes,
    Stream.tap((state) => Effect.sync(() => void states.push(state))),
    Stream.takeUntil((state) => state === "absent" && states.length > 1),
    Stream.runDrain,
    Effect.forkChild
  )

describeCluster("watchState", () => {
  it.live(
    "reports absence, then the object made after an idle watch was aborted, then its deletion",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          const core = kc.makeApiClient(CoreV1Api)
          const states: Array<string> = []
          const watching = yield* follow(kc, "late", states)
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
        }), { bookmarkMs: 60_000 }),
    90_000
  )

  it.live(
    "a watch the server ends resumes from its bookmark without a list; 410 Gone lists again",
    () =>
      onStandIn((kc, cluster) =>
        Effect.gen(function*() {
          const core = kc.makeApiClient(CoreV1Api)
          const path = `/api/v1/namespaces/${namespace}/pods`
          const selector = `fieldSelector=${encodeURIComponent("metadata.name=quiet")}`
          const ours = () =>
            cluster.requests.filter((r) =>
              r.method === "GET" && r.url.startsWith(`${path}?`) && r.url.includes(selector)
            )
          const lists = () => ours().filter((r) => !r.url.includes("watch=true")).length
          const watches = () => ours().filter((r) => r.url.includes("watch=true"))
          const states: Array<string> = []
          const watching = yield* follow(kc, "quiet", states)
          assert.isTrue(yield* eventually(async () => watches().length === 1), "the watch never opened")
          assert.isTrue(watches()[0]!.url.includes("allowWatchBookmarks=true"), "no bookmarks asked for")
          // Quiet, then ended by the server (its time-out): opened again from the bookmark's resourceVersion.
          cluster.endWatches()
          assert.isTrue(yield* eventually(async () => watches().length === 2), "the watch was not opened again")
          assert.match(watches()[1]!.url, /resourceVersion=\d+/)
          assert.strictEqual(lists(), 1)
          yield* Effect.promise(() =>
            core.createNamespacedPod({
              namespace,
              body: {
                metadata: { name: "quiet" },
                spec: { containers: [{ name: "main", image: podImage(), command: ["sleep", "300"] }] }
              }
            })
          )
          assert.isTrue(yield* eventually(async () => states.includes("present quiet")), "the pod was not seen")
          // Compacted: the open watch is told 410 Expired, so the state is listed again, then watched.
          cluster.compact()
          assert.isTrue(yield* eventually(async () => lists() === 2), "410 Gone did not list again")
          yield* Effect.promise(() => core.deleteNamespacedPod({ name: "quiet", namespace }))
          yield* Fiber.join(watching).pipe(Effect.timeout("20 seconds"))
          assert.deepStrictEqual(states, ["absent", "present quiet", "absent"])
        }), { bookmarkMs: 50 }),
    60_000
  )
})
