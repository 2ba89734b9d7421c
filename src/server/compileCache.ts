/**
 * V8's compile cache for the server's own modules (Node's `module.enableCompileCache`): a boot
 * that finds its modules' code there skips parsing and compiling them (the payload's boot spends
 * ~20 ms of its ~130 ms of CPU there). Whoever starts the server names the directory in
 * `EFFECT_SANDBOX_COMPILE_CACHE`: a runtime image carries one made by a boot at its build
 * (runtimeImage/imageContext.ts), LocalRuntime a per-user one (layers/local/compileCache.ts).
 *
 * Node keeps each script's code under a hash of its path and checks the source's checksum before
 * using it, so a changed payload misses (and rewrites its entries) rather than running stale code;
 * a directory it cannot write (a read-only image layer, another user's) is read, never written, and
 * never fails the start. Not `NODE_COMPILE_CACHE`: that would turn the cache on for every `node` the
 * sandbox's shells run.
 */
import { enableCompileCache, flushCompileCache } from "node:module"

/** The cache's directory, for the server only (taken out of the environment its shells inherit). */
export const COMPILE_CACHE_VARIABLE = "EFFECT_SANDBOX_COMPILE_CACHE"

/** Turn the cache on for every module compiled from now on, when the environment names a directory. */
export const enableServerCompileCache = (env: NodeJS.ProcessEnv = process.env): void => {
  const dir = env[COMPILE_CACHE_VARIABLE]
  delete env[COMPILE_CACHE_VARIABLE]
  if (dir) enableCompileCache(dir)
}

/**
 * Write what this boot compiled and found no cache for (nothing when all was found). Called once the
 * server listens, not left to its exit: a first server's cache then serves the next start at once,
 * and a server that is killed rather than stopped still leaves it.
 */
export const saveServerCompileCache = (): void => flushCompileCache()
