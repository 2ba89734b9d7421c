/**
 * The lease watchdog's process (leaseWatchdog.ts starts it): `node leaseWatchdogMain <dir>` watches
 * the owner's lease in `dir`. It only reads a file until the lease goes stale, through `node:fs`
 * alone: Effect, dockerode and the reaper are loaded then, so an idle watchdog costs little more
 * than a bare Node process, and starting one costs an owner's start no more either.
 */
import { existsSync, utimesSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isStale, LEASE_FILE, readLease } from "../../server/leaseFile.ts"

/** How often the watchdog looks at its lease: a released lease lets it exit this soon. */
const POLL_MS = 500

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One reaper pass over the engine (Effect and dockerode are loaded on the first). */
const reapPass = async (): Promise<void> => {
  const [{ Effect }, { DockerEngine }, { reapOrphans }] = await Promise.all([
    import("effect"),
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

/**
 * The owner's process has ended (its end of our stdin closed) while its lease is still there: it
 * died without releasing. Date the lease's last renewal to the epoch, so that it reads as stale
 * now, to the containers that watch it and to every reaper, instead of after its terms run out.
 */
const expire = (dir: string) => {
  try {
    utimesSync(join(dir, LEASE_FILE), 0, 0)
  } catch {
    // Released or reaped meanwhile: nothing left to expire.
  }
}

const dir = process.argv[2]
if (process.argv[1] === fileURLToPath(import.meta.url) && dir !== undefined) {
  process.stdin.on("error", () => undefined).on("end", () => expire(dir)).resume()
  void watch(dir).finally(() => process.exit(0))
}
