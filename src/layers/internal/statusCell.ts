/**
 * A runtime's status: the current value, and a stream that replays every
 * transition so far before following new ones. A layer is built before anyone
 * can subscribe, so without the replay nobody could see STARTING_RUNTIME,
 * BUILDING_RUNTIME or RUNTIME_STARTED.
 */
import { Effect, PubSub, Ref, Semaphore, Stream } from "effect"
import type { RuntimeStatus } from "../../schema/RuntimeStatus.ts"

export interface StatusCell {
  readonly get: Effect.Effect<RuntimeStatus>
  readonly set: (status: RuntimeStatus) => Effect.Effect<void>
  readonly update: (f: (status: RuntimeStatus) => RuntimeStatus) => Effect.Effect<void>
  /** Every status so far, oldest first, then each change as it happens. */
  readonly changes: Stream.Stream<RuntimeStatus>
}

/** Transitions kept for late subscribers (a runtime has a handful; pause/resume cycles add two each). */
const REPLAYED = 64

const makeCell = Effect.gen(function*() {
  const current = yield* Ref.make<RuntimeStatus>("STARTING_RUNTIME")
  const hub = yield* PubSub.unbounded<RuntimeStatus>({ replay: REPLAYED })
  yield* PubSub.publish(hub, "STARTING_RUNTIME")
  // One writer at a time, so subscribers see transitions in the order they happened.
  const lock = yield* Semaphore.make(1)
  const update = (f: (status: RuntimeStatus) => RuntimeStatus) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const before = yield* Ref.get(current)
      const after = f(before)
      if (after === before) return
      yield* Ref.set(current, after)
      yield* PubSub.publish(hub, after)
    }))
  return {
    get: Ref.get(current),
    set: (status) => update(() => status),
    update,
    changes: Stream.fromPubSub(hub)
  } satisfies StatusCell
})

/** The status of a runtime being built: STARTING_RUNTIME now, STOPPED when the scope closes. */
export const makeStatus = Effect.acquireRelease(makeCell, (cell) => cell.set("STOPPED"))
