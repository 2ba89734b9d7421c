/**
 * `--temporary-dir DIR`: directories the server owns for its lifetime (a
 * LocalRuntime's temporary workspace and state directory). The owner removes
 * them on release, but an owner killed with SIGKILL runs no finalizer; its
 * server still stops (its stdin closes) and removes them here, after every
 * other part of the server (shells, kernels) has stopped writing into them.
 */
import { Effect, Layer } from "effect"
import { removePath } from "../executor/cleanup.ts"

const remove = (dir: string) =>
  removePath(dir).pipe(
    Effect.catch((error) => Effect.logWarning(`cannot remove the temporary directory ${dir}: ${error.message}`))
  )

/** Provide beneath the server: built first, so its finalizer runs after the server's. */
export const removeOnStop = (dirs: ReadonlyArray<string>) =>
  Layer.effectDiscard(Effect.addFinalizer(() => Effect.forEach(dirs, remove, { discard: true })))
