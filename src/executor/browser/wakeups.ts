/**
 * Waiting for a browser event with a deadline: callers wait until `wakeAll` is
 * called (an event they care about happened) or their timeout passes, whichever
 * comes first. Used for in-flight navigations and for downloads.
 */
export class Wakeups {
  #waiters: Array<() => void> = []

  /** Resolves at the next `wakeAll`, or after `timeoutMs`. */
  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      this.#waiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /** Wakes every current waiter. */
  wakeAll(): void {
    for (const wake of this.#waiters.splice(0)) wake()
  }
}
