/**
 * The leases' watchdog: a small detached process per owner process, so an orphan is
 * removed even when no other runtime ever starts on the engine. The owner cannot
 * clean up after a SIGKILL, and its containers only stop themselves when their
 * lease goes stale (their stopped record and the temporary workspace would stay);
 * the watchdog, in a session of its own, outlives the owner, and when a lease it
 * watches goes stale it runs a reaper pass (which removes the containers and
 * their workspaces, and the lease). The process is leaseWatchdogMain.ts.
 *
 * One watchdog serves every lease of its owner (one a DockerRuntime layer or pool): a `node`
 * process per layer cost each start ~0.16 s of CPU and held ~40 MB while its sandbox lived. The
 * owner tells it each lease taken (`+<dir>`) and released (`-<dir>`), a line each on its stdin.
 * That pipe's other end only the owner holds: the kernel closes it when the owner's process ends,
 * however it ends (`process.exit()`, a signal, SIGKILL). That end of file tells the watchdog at once
 * that nobody will renew the leases it still watches, where staleness tells it only after
 * `staleAfter` (20 s). No pid is involved, so it holds across PID namespaces. When its owner has
 * held no lease for `IDLE_MS` the owner closes the pipe itself, and the watchdog, watching nothing,
 * exits: an owner starting one sandbox after another keeps one watchdog, and one done with Docker
 * keeps none.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import type { Socket } from "node:net"
import { fileURLToPath } from "node:url"

/** The watchdog's script beside this module (source in this repository, the compiled module when installed). */
const main = fileURLToPath(import.meta.url.replace(/leaseWatchdog\.(\w+)$/, "leaseWatchdogMain.$1"))

/** How long the watchdog stays once no lease is held, for the next one. */
const IDLE_MS = 30_000

/** This process's watchdog, the leases it watches, and the timer that ends it once idle. */
let watchdog: ChildProcess | undefined
const watched = new Set<string>()
let idle: ReturnType<typeof setTimeout> | undefined

/** End the idle watchdog (a lease taken meanwhile clears the timer): its stdin's end of file, with nothing watched, lets it exit. */
const endWatchdog = () => {
  watchdog?.stdin?.end()
  watchdog = undefined
}

const alive = (child: ChildProcess | undefined): child is ChildProcess =>
  child !== undefined && child.exitCode === null && child.signalCode === null && child.stdin?.writable === true

/** Start a watchdog, detached (it must outlive a SIGKILLed owner), told every lease still held. */
const startWatchdog = (): ChildProcess => {
  const child = spawn(process.execPath, [main], { detached: true, stdio: ["pipe", "ignore", "ignore"] })
  child.on("error", () => undefined)
  child.stdin?.on("error", () => undefined) // Neither the child nor the pipe to it may keep the owner's process alive.
  ;(child.stdin as Socket | null)?.unref()
  child.unref()
  for (const dir of watched) child.stdin?.write(`+${dir}\n`)
  return child
}

/**
 * Have this process's watchdog watch the lease in `dir` for as long as the scope lives (started
 * if none runs, or if the one that ran has died: a new one is told every lease still held).
 */
export const leaseWatchdog = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      clearTimeout(idle)
      watched.add(dir)
      if (alive(watchdog)) watchdog.stdin?.write(`+${dir}\n`)
      else watchdog = startWatchdog()
    }),
    () =>
      Effect.sync(() => {
        watched.delete(dir)
        if (!alive(watchdog)) return
        watchdog.stdin?.write(`-${dir}\n`)
        // A timer that does not keep the owner's process alive: its exit closes the pipe anyway.
        if (watched.size === 0) idle = setTimeout(endWatchdog, IDLE_MS).unref()
      })
  )
