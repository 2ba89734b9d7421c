/**
 * A provider SDK's promise given a deadline of our own: some SDKs can leave a request pending for
 * ever (a stream closed under it, an abort that never reaches Node's fetch), and their own time-out
 * cannot end it then. The timer is held until the promise settles, so nothing collects it.
 */

/** `promise`, or `timedOut()` as its failure once `ms` passed without it settling. */
export const settledWithin = <A>(promise: PromiseLike<A>, ms: number, timedOut: () => unknown): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      }
    )
  })
