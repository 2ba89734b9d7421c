/** Plain-async handles on scoped Effect resources, so the chaos groups can be ordinary loops. */
import { Effect, Exit, Scope } from "effect"

export interface Handle<A> {
  readonly value: A
  readonly release: () => Promise<void>
}

/** Acquire a scoped resource; `release` closes its scope (idempotent). */
export const acquire = async <A, E>(effect: Effect.Effect<A, E, Scope.Scope>): Promise<Handle<A>> => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const value = await Effect.runPromise(Scope.provide(scope)(effect))
    return { value, release: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
