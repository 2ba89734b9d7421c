/**
 * Sandboxes a caller forgot to close, closed when the process is stopped by a signal. A sandbox
 * holds a shell, a server child or a container: Node's default for SIGINT, SIGTERM and SIGHUP is
 * to die at once, which runs no finalizer. While a sandbox is open this module listens for them,
 * closes every open sandbox, then lets the signal end the process as it would have. When the
 * application has a listener of its own for the signal, the application decides (and closes its
 * sandboxes): this one then does nothing.
 */

const SIGNALS: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM", "SIGHUP"]

const open = new Set<{ readonly close: () => Promise<void> }>()

const onSignal = (signal: NodeJS.Signals) => {
  if (process.listenerCount(signal) > 1) return
  void Promise.allSettled([...open].map((sandbox) => sandbox.close())).then(() => {
    stopListening()
    process.kill(process.pid, signal)
  })
}

const stopListening = () => {
  for (const signal of SIGNALS) process.removeListener(signal, onSignal)
}

/** Track an open sandbox (listening for the signals while any is open). */
export const opened = (sandbox: { readonly close: () => Promise<void> }) => {
  if (open.size === 0) { for (const signal of SIGNALS) process.on(signal, onSignal) }
  open.add(sandbox)
}

/** Forget a closed sandbox (no longer listening once none is open). */
export const closed = (sandbox: { readonly close: () => Promise<void> }) => {
  open.delete(sandbox)
  if (open.size === 0) stopListening()
}
