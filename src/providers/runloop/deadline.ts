/**
 * A deadline on every `@runloop/api-client` call. The SDK's HTTP/2 transport (its default on Node)
 * settles a request only on a response or a stream error: a stream closed under it without one (the
 * connection cut by the far end) leaves the request pending for ever, and its own `timeout` cannot
 * end it then (the abort finds the stream already cleaned up). So each call races a timer of its own:
 * past it the call fails as "no answer", which the classifier takes for unavailable (worth sending
 * again: a create keeps its idempotency key), instead of a start or a release that never ends.
 */
import { settledWithin } from "../../hosted/settledWithin.ts"
import type { ProviderCall } from "../../services/Driver.ts"

/** `call`, each promise it runs given at most `ms` to settle. */
export const withDeadline = (call: ProviderCall, ms: number): ProviderCall => (operation, run) =>
  call(operation, () => settledWithin(run(), ms, () => new Error(`no answer within ${ms / 1000} s`)))
