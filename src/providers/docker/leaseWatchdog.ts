/**
 * The lease's watchdog: a small detached process per owner lease, so an orphan is
 * removed even when no other runtime ever starts on the engine. The owner cannot
 * clean up after a SIGKILL, and its containers only stop themselves when their
 * lease goes stale (their stopped record and the temporary workspace would stay);
 * the watchdog, in a session of its own, outlives the owner, and when the lease it
 * watches goes stale it runs a reaper pass (which removes the containers and
 * their workspaces, and the lease) and exits. When the owner releases normally it
 * stops the watchdog. The process is leaseWatchdogMain.ts.
 *
 * The watchdog's stdin is a pipe whose other end only the owner holds and never writes: the kernel
 * closes it when the owner's process ends, however it ends (`process.exit()`, a signal, SIGKILL).
 * That end of file tells the watchdog at once that nobody will renew the lease, where staleness
 * tells it only after `staleAfter` (20 s). No pid is involved, so it holds across PID namespaces.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import type { Socket } from "node:net"
import { fileURLToPath } from "node:url"

/** The watchdog's script beside this module (source in this repository, the compiled module when installed). */
const main = fileURLToPath(import.meta.url.replace(/leaseWatchdog\.(\w+)$/, "leaseWatchdogMain.$1"))

/**
 * Start the watchdog of the lease in `dir`, detached (it must outlive a SIGKILLed owner),
 * for as long as the scope lives: releasing the lease stops it.
 */
export const leaseWatchdog = (dir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [main, dir], { detached: true, stdio: ["pipe", "ignore", "ignore"] })
      child.on("error", () => undefined)
      child.stdin?.on("error", () => undefined) // Neither the child nor the pipe to it may keep the owner's process alive.
      ;(child.stdin as Socket | null)?.unref()
      child.unref()
      return child
    }),
    (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill())
  )
