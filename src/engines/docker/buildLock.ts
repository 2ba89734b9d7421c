/**
 * One build of a runtime image tag at a time on this machine. Two processes starting their first
 * runtime at once (the parallel conformance workers, two agents on one host) would otherwise both
 * build the tag: the later build takes it, and the earlier image, perhaps already resolved to its
 * id by the other process, is left untagged or removed under it. The lock is a directory in the
 * temp dir (mkdir is atomic) holding the builder's pid: a lock whose builder is gone is taken over,
 * so a builder killed mid-build blocks no one. It orders builders of one machine only; a remote
 * engine shared by several machines may still see one build twice, which costs time, not
 * correctness.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processAlive } from "../../runtime/processAlive.ts"

/** How long a lock may lack its pid file (its maker between mkdir and write) before it counts as abandoned. */
const PID_GRACE_MS = 10_000

/** Where the lock of `tag` lives (one directory per tag, in the temp dir). */
export const lockDir = (tag: string) =>
  join(tmpdir(), `effect-sandbox-build-${createHash("sha256").update(tag).digest("hex").slice(0, 16)}`)

/** True when the lock at `dir` was left by a builder that is gone. */
const abandoned = (dir: string) => {
  try {
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"))
    return !processAlive(pid)
  } catch {
    try {
      return Date.now() - statSync(dir).mtimeMs > PID_GRACE_MS
    } catch {
      return false
    }
  }
}

/** Take the lock: true when taken, false when another live builder holds it. */
const tryTake = (dir: string) => {
  try {
    mkdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    if (abandoned(dir)) rmSync(dir, { recursive: true, force: true })
    return false
  }
  writeFileSync(join(dir, "pid"), String(process.pid))
  return true
}

const acquire = (dir: string) =>
  Effect.gen(function*() {
    while (!tryTake(dir)) yield* Effect.sleep("250 millis")
  })

/** Run `build` holding the build lock of `tag` (waiting for another builder of it to finish first). */
export const withBuildLock = (tag: string) => <A, E, R>(build: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const dir = lockDir(tag)
  return Effect.acquireUseRelease(
    acquire(dir),
    () => build,
    () => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
}
