/**
 * A control-plane request of the `e2b` SDK, bounded on our side too. The SDK aborts a request at
 * `requestTimeoutMs` by a signal that Node's fetch reaches through a clone of the request (its
 * rate-limit retry clones it), and Node's fetch may lose that link when the clone is collected
 * (nodejs/node#55428): the abort then never arrives, and a request E2B holds waits for ever. Seen
 * here as a start that hung past its 2 s time-out, now and then, on a loaded machine.
 */

import { settledWithin } from "../../hosted/settledWithin.ts"

/** How long after the SDK's own abort ours fails the request: the SDK's wins whenever it arrives. */
const GRACE_MS = 500

/** The SDK's default `requestTimeoutMs` (its ConnectionConfig). */
export const SDK_REQUEST_TIMEOUT_MS = 60_000

/**
 * `request()`, failed with the SDK's own TimeoutError ("The operation was aborted due to timeout")
 * if it has not settled `GRACE_MS` after `timeoutMs` (hosted/settledWithin.ts).
 */
export const withinRequestTimeout = <A>(timeoutMs: number, request: () => Promise<A>): Promise<A> =>
  settledWithin(
    request(),
    timeoutMs + GRACE_MS,
    () => new DOMException("The operation was aborted due to timeout", "TimeoutError")
  )
