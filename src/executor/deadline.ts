/**
 * Waiting for a promise with a deadline, for tools that stop what they started
 * when it does not end in time (a kernel's cell, a browser action): the promise
 * itself goes on, and the caller decides what to do about it.
 */
export const withTimeout = <A>(promise: Promise<A>, ms: number): Promise<A | "timeout"> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve("timeout"), ms)
    void promise.then((value) => {
      clearTimeout(timer)
      resolve(value)
    })
  })
