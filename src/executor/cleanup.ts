/**
 * Removing files and directories when a scope closes. Asynchronously: a finalizer that blocks
 * blocks the event loop, which serves every other session meanwhile (a large state directory or
 * workspace takes long to remove). A path that cannot be removed is a typed `RemoveError`; in a
 * finalizer, which cannot fail, it is logged: a leftover path is not a failure of the work it
 * cleaned up after.
 */
import { Data, Effect } from "effect"
import { rm } from "node:fs/promises"

export class RemoveError extends Data.TaggedError("RemoveError")<{
  readonly path: string
  readonly message: string
}> {}

/** Remove `path` and everything under it; a path already gone is removed. */
export const removePath = Effect.fn("Cleanup.removePath")(function*(path: string) {
  yield* Effect.tryPromise({
    try: () => rm(path, { recursive: true, force: true }),
    catch: (cause) => new RemoveError({ path, message: `Cannot remove ${path}: ${String(cause)}` })
  })
})

/** `removePath` for a finalizer: a failure is logged as a warning. */
export const removeInFinalizer = (path: string): Effect.Effect<void> =>
  removePath(path).pipe(Effect.catch((error) => Effect.logWarning(error.message)))
