/**
 * Sandboxes a caller forgot to close. A sandbox holds a shell, a server child or a container, and
 * Node runs no finalizer when a signal ends it (the default for SIGINT, SIGTERM and SIGHUP) or when
 * `process.exit()` is called. While a sandbox is open this module listens for those signals, closes
 * every open sandbox, then lets the signal end the process as it would have; when the application
 * has a listener of its own for the signal, the application decides (and closes its sandboxes), and
 * this one does nothing. At `exit` nothing asynchronous can run: each sandbox's synchronous
 * `onExit` removes what would otherwise stay (the runtimes remove the rest themselves: see
 * docs/promise-api.md).
 */

const SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM", "SIGHUP"]

interface Open {
  readonly close: () => Promise<void>
}

/** Each open sandbox, with what to do synchronously should the process exit with it open. */
const open = new Map<Open, () => void>()

const onSignal = (signal: NodeJS.Signals) => {
  if (process.listenerCount(signal) > 1) return
  void Promise.allSettled([...open.keys()].map((sandbox) => sandbox.close())).then(() => {
    stopListening()
    process.kill(process.pid, signal)
  })
}

const onExit = () => {
  for (const atExit of open.values()) atExit()
}

const stopListening = () => {
  for (const signal of SIGNALS) process.removeListener(signal, onSignal)
  process.removeListener("exit", onExit)
}

/** Track an open sandbox (listening while any is open); `atExit` runs if the process exits with it open. */
export const opened = (sandbox: Open, atExit: () => void) => {
  if (open.size === 0) {
    for (const signal of SIGNALS) process.on(signal, onSignal)
    process.on("exit", onExit)
  }
  open.set(sandbox, atExit)
}

/** Forget a closed sandbox (no longer listening once none is open). */
export const closed = (sandbox: Open) => {
  open.delete(sandbox)
  if (open.size === 0) stopListening()
}
