/**
 * The lease's watchdog: a small detached process per owner lease, so an orphan is
 * removed even when no other runtime ever starts on the engine. The owner cannot
 * clean up after a SIGKILL, and its containers only stop themselves when their
 * lease goes stale (their stopped record and the temporary workspace would stay);
 * the watchdog, in a session of its own, outlives the owner, and when the lease it
 * watches goes stale it runs a reaper pass (which removes the containers and
 * their workspaces, and the lease) and exits. When the owner releases normally it
 * stops the watchdog.
 *
 * It only reads a file until the lease goes stale: dockerode and the reaper are
 * loaded then, so an idle watchdog costs little more than a bare Node process.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isStale, LEASE_FILE, readLease } from "../../server/ownerLease.ts"

/** How often the watchdog looks at its lease: a released lease lets it exit this soon. */
const POLL_MS = 500

/** This module, run as a script (source in this repository, the compiled module when installed). */
const self = fileURLToPath(import.meta.url)

/**
 * Start the watchdog of the lease in `dir`, detached (it must outlive a SIGKILLed owner),
 * for as long as the scope lives: releasing the lease stops it.
 */
export const leaseWatchdog = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [self, dir], { detached: true, stdio: "ignore" })
      child.on("error", () => undefined)
      child.unref()
      return child
    }),
    (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill())
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One reaper pass over the engine (Effect and dockerode are loaded on the first). */
const reapPass = async (): Promise<void> => {
  const [{ DockerEngine }, { reapOrphans }] = await Promise.all([
    import("../../engines/docker/engine.ts"),
    import("./reaper.ts")
  ])
  await Effect.runPromise(reapOrphans().pipe(Effect.provide(DockerEngine.layer), Effect.ignore))
}

/**
 * Watch `dir` until its lease is released or reaped. A lease that looks stale gets a reaper
 * pass, which confirms it over two renewals: an owner that was only slow renews meanwhile,
 * keeps its containers, and the watch goes on.
 */
const watch = async (dir: string): Promise<void> => {
  const file = join(dir, LEASE_FILE)
  let graceMs = POLL_MS
  while (true) {
    await sleep(POLL_MS)
    const lease = readLease(file)
    if (lease !== null) {
      graceMs = Math.max(2 * lease.renewEveryMs, lease.staleAfterMs)
      if (isStale(lease)) await reapPass()
    } else if (!existsSync(dir)) {
      // Swept as stale by a reaper (a released lease stops us at once): an owner that was only
      // slow writes it again at its next renewal, if it comes back within the grace.
      await sleep(graceMs)
      if (!existsSync(dir)) return
    }
  }
}

if (process.argv[1] === self && process.argv[2] !== undefined) {
  void watch(process.argv[2]).finally(() => process.exit(0))
}
