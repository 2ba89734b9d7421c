/**
 * A runtime's status: the current value, and a stream that replays every
 * transition so far before following new ones. A layer is built before anyone
 * can subscribe, so without the replay nobody could see STARTING_RUNTIME,
 * BUILDING_RUNTIME or RUNTIME_STARTED.
 *
 * STOPPED (set when the layer's scope closes) is final: later sets are ignored
 * and the stream ends with it, so a consumer folding the stream finishes.
 */
import { Deferred, Effect, PubSub, Ref, Semaphore, Stream } from "effect"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"

export interface StatusCell {
  readonly get: Effect.Effect<RuntimeStatus>
  readonly set: (status: RuntimeStatus) => Effect.Effect<void>
  readonly update: (f: (status: RuntimeStatus) => RuntimeStatus) => Effect.Effect<void>
  /** Every status so far, oldest first, then each change as it happens; ends after STOPPED. */
  readonly changes: Stream.Stream<RuntimeStatus>
  /** Waits while the status is `status` (at once if it is not), then gives the one it changed to. */
  readonly awaitNot: (status: RuntimeStatus) => Effect.Effect<RuntimeStatus>
}

/** Transitions kept for late subscribers (a runtime has a handful; pause/resume cycles add two each). */
const REPLAYED = 64

const makeCell = Effect.gen(function*() {
  const current = yield* Ref.make<RuntimeStatus>("STARTING_RUNTIME")
  // Completed (and replaced) at each change: what `awaitNot` waits on.
  const changed = yield* Ref.make(yield* Deferred.make<void>())
  const hub = yield* PubSub.unbounded<RuntimeStatus>({ replay: REPLAYED })
  yield* PubSub.publish(hub, "STARTING_RUNTIME")
  // One writer at a time, so subscribers see transitions in the order they happened.
  const lock = yield* Semaphore.make(1)
  const update = (f: (status: RuntimeStatus) => RuntimeStatus) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const before = yield* Ref.get(current)
      const after = f(before)
      if (after === before || before === "STOPPED") return
      yield* Ref.set(current, after)
      yield* PubSub.publish(hub, after)
      const waiting = yield* Ref.getAndSet(changed, yield* Deferred.make<void>())
      yield* Deferred.succeed(waiting, undefined)
    }))
  // The signal is read before the status: a change in between is seen by the status check.
  const awaitNot = (status: RuntimeStatus): Effect.Effect<RuntimeStatus> =>
    Effect.gen(function*() {
      const signal = yield* Ref.get(changed)
      const now = yield* Ref.get(current)
      if (now !== status) return now
      yield* Deferred.await(signal)
      return yield* awaitNot(status)
    })
  return {
    get: Ref.get(current),
    set: (status) => update(() => status),
    update,
    changes: Stream.fromPubSub(hub).pipe(Stream.takeUntil((status) => status === "STOPPED")),
    awaitNot
  } satisfies StatusCell
})

/** The status of a runtime being built: STARTING_RUNTIME now, STOPPED when the scope closes. */
export const makeStatus = Effect.acquireRelease(makeCell, (cell) => cell.set("STOPPED"))
