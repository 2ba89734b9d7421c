/**
 * Where LocalRuntime's servers keep V8's compile cache (server/compileCache.ts): one directory per
 * user, `$XDG_CACHE_HOME/effect-sandbox/compile-cache` (else `~/.cache/...`). The first server after
 * an install or upgrade finds nothing, boots as before and writes its modules' code there once it
 * listens; every later start reads it (~25 ms less CPU of ~150). Node keeps one subdirectory per
 * Node version and user, and checks each file's checksum before using its entry, so a payload that
 * changed misses and rewrites rather than running stale code. `NODE_DISABLE_COMPILE_CACHE=1`
 * turns it off; a directory that cannot be made or written costs nothing but the cache.
 */
import { homedir } from "node:os"
import { join } from "node:path"

export const localCompileCacheDir = (env: NodeJS.ProcessEnv = process.env): string =>
  join(env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "effect-sandbox", "compile-cache")
