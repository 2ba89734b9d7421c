/**
 * A warm pool: `size` resources started ahead of demand, each in its own scope.
 * Taking one moves its scope to the taker (it is never returned or reused); the
 * pool starts a replacement in the background. Releasing the pool stops the
 * refill first, then closes every idle resource.
 */
import { Effect, Exit, Fiber, Queue, Schedule, Scope } from "effect"

export interface WarmPool<A> {
  /** A ready resource, owned from now on by the caller's scope. */
  readonly take: Effect.Effect<A, never, Scope.Scope>
}

interface Owned<A> {
  readonly value: A
  readonly scope: Scope.Closeable
}

export const makeWarmPool = <A, E, R>(
  size: number,
  start: Effect.Effect<A, E, Scope.Scope | R>,
  what: string
): Effect.Effect<WarmPool<A>, never, Scope.Scope | R> =>
  Effect.gen(function*() {
    const ready = yield* Queue.bounded<Owned<A>>(Math.max(1, size))
    const startOne = Effect.acquireUseRelease(
      Scope.make(),
      (scope) => Scope.provide(start, scope).pipe(Effect.flatMap((value) => Queue.offer(ready, { value, scope }))),
      // Ownership passed to the queue on success; otherwise close what was started.
      (scope, exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)
    )
    const refill = yield* startOne.pipe(
      Effect.tapCause((cause) => Effect.logWarning(`warm ${what} failed to start; retrying`, cause)),
      Effect.retry({ schedule: Schedule.spaced("1 second") }),
      Effect.forever,
      Effect.forkDetach
    )
    // Stop refilling first: draining the queue would otherwise let a pending offer slip one in.
    yield* Effect.addFinalizer(() =>
      Fiber.interrupt(refill).pipe(
        Effect.andThen(Queue.clear(ready)),
        Effect.flatMap((left) => Effect.forEach(left, (o) => Scope.close(o.scope, Exit.void), { discard: true }))
      )
    )
    return {
      take: Effect.gen(function*() {
        const owned = yield* Queue.take(ready)
        yield* Effect.addFinalizer(() => Scope.close(owned.scope, Exit.void))
        return owned.value
      })
    }
  })
