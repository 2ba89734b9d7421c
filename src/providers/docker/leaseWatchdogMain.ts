/**
 * The lease watchdog's process (leaseWatchdog.ts starts it, one per owner process): `node
 * leaseWatchdogMain` watches the leases its owner names on its stdin, `+<dir>` when one is taken
 * and `-<dir>` when it is released, a line each. It only reads files until a lease goes stale,
 * through `node:fs` alone: Effect, dockerode and the reaper are loaded then, so an idle watchdog
 * costs little more than a bare Node process, and starting one costs an owner's start no more either.
 */
import { existsSync, utimesSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isStale, LEASE_FILE, readLease } from "../../server/leaseFile.ts"

/** How often the watchdog looks at its leases. */
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

/** A lease watched: since when it has been missing (a reaper swept it as stale), and for how long it may be. */
interface Watched {
  /** How long a missing lease may come back (an owner that was only slow writes it again). */
  graceMs: number
  missingSince: number | undefined
}

/** The leases watched, by directory. */
const leases = new Map<string, Watched>()
/** The owner's end of stdin has closed: it is gone, and nothing more will be named. */
let ownerGone = false

/**
 * The owner's process has ended while a lease is still there: it died without releasing. Date the
 * lease's last renewal to the epoch, so that it reads as stale now, to the containers that watch it
 * and to every reaper, instead of after its terms run out.
 */
const expire = (dir: string) => {
  try {
    utimesSync(join(dir, LEASE_FILE), 0, 0)
  } catch {
    // Released or reaped meanwhile: nothing left to expire.
  }
}

/** Take one line of the owner's: `+<dir>` watches a lease, `-<dir>` forgets a released one. */
const take = (line: string) => {
  const dir = line.slice(1)
  if (dir === "") return
  if (line.startsWith("+")) {
    leases.set(dir, { graceMs: POLL_MS, missingSince: undefined })
  } else if (line.startsWith("-")) {
    leases.delete(dir)
  }
}

/**
 * Look at every lease until none is left and the owner is gone. A lease that looks stale gets a
 * reaper pass (one for all of them), which confirms it over two renewals: an owner that was only
 * slow renews meanwhile, keeps its containers, and the watch goes on. A lease missing for longer
 * than its grace was swept by a reaper, its containers with it.
 */
const watch = async (): Promise<void> => {
  while (true) {
    if (ownerGone && leases.size === 0) return
    await sleep(POLL_MS)
    let stale = false
    const now = Date.now()
    for (const [dir, watched] of leases) {
      const lease = readLease(join(dir, LEASE_FILE))
      if (lease !== null) {
        watched.graceMs = Math.max(2 * lease.renewEveryMs, lease.staleAfterMs)
        watched.missingSince = undefined
        stale ||= isStale(lease)
      } else if (!existsSync(dir)) {
        watched.missingSince ??= now
        // With its owner gone nobody will write it again: no grace to wait out.
        if (ownerGone || now - watched.missingSince >= watched.graceMs) leases.delete(dir)
      }
    }
    if (stale) await reapPass()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let pending = ""
  process.stdin
    .on("error", () => undefined)
    .on("data", (chunk: Buffer) => {
      const lines = (pending + chunk.toString("utf8")).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) take(line)
    })
    .on("end", () => {
      ownerGone = true
      for (const dir of leases.keys()) expire(dir)
    })
  void watch().finally(() => process.exit(0))
}
