/**
 * Where the added variables' file (env.ts) lives. It holds `addEnvVars`' values in clear, secrets
 * included, for shells to source: in a container's state directory (`/tmp`) that is the
 * container's writable layer, which `docker commit`, `docker export`, `docker cp` and the engine's
 * storage on the host keep after the session moved on. So, where this executor owns its state
 * (a server in a container or pod, CliRuntime), the file goes to a private directory on the
 * memory-backed `/dev/shm` instead, removed with the executor. A state directory given by an owner
 * keeps it (LocalRuntime removes that directory even when this process is killed, which it could
 * not do for `/dev/shm`); so does a system without a tmpfs at `/dev/shm`.
 */
import { Effect } from "effect"
import { mkdtempSync, statfsSync } from "node:fs"
import { join } from "node:path"
import { removeInFinalizer } from "./cleanup.ts"

/** Linux's `statfs` type of a tmpfs (`TMPFS_MAGIC`). */
const TMPFS_MAGIC = 0x01021994

const MEMORY_ROOT = "/dev/shm"

const isTmpfs = (path: string) => {
  try {
    return statfsSync(path).type === TMPFS_MAGIC
  } catch {
    return false
  }
}

/** A new private (0700) directory under `/dev/shm` when that is a tmpfs, else undefined. */
const memoryDir = (): string | undefined => {
  if (!isTmpfs(MEMORY_ROOT)) return undefined
  try {
    return mkdtempSync(join(MEMORY_ROOT, "effect-sandbox-env-"))
  } catch {
    return undefined
  }
}

/**
 * The directory for the env file: on `/dev/shm` (removed with the scope) when `stateDir` is the
 * executor's own and a tmpfs is there, else `stateDir`.
 */
export const envFileDir = (stateDir: string, ownState: boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => ownState ? memoryDir() : undefined),
    (dir) => dir === undefined ? Effect.void : removeInFinalizer(dir)
  ).pipe(Effect.map((dir) => dir ?? stateDir))
