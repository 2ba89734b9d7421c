/**
 * The one primitive every driver calls its provider with (services/Driver.ts `ProviderCall`): a
 * promise's rejection classified by the driver, waited out and retried under one schedule while the
 * provider asks for patience, and turned into a `ProviderError` a caller can match on. Written once
 * here, so no provider retries a 429 while another gives up on it, and every call has a span.
 */
import { Effect, type Schedule } from "effect"
import { ProviderError, type ProviderReason } from "../schema/errors.ts"
import { waitOut } from "../schema/waitOut.ts"
import type { Classified, ProviderCall } from "../services/Driver.ts"

/** The reasons worth waiting out: the provider said "not now", not "no". */
const RETRYABLE: ReadonlySet<ProviderReason> = new Set(["rate-limited", "unavailable", "transition"])

/** Whether a failure is one the provider asked us to wait out. */
export const retryable = (reason: ProviderReason): boolean => RETRYABLE.has(reason)

/** A classified failure as the error callers see: "<provider> could not <operation>: <text>". */
export const providerError = (provider: string, operation: string, classified: Classified): ProviderError =>
  new ProviderError({
    provider,
    operation,
    reason: classified.reason,
    ...(classified.status === undefined ? {} : { status: classified.status }),
    message: `${provider} could not ${operation}: ${classified.text}`
  })

/** The `ProviderCall` of one provider, its classifier and the runtime's retry schedule. */
export const makeProviderCall = (
  provider: string,
  classify: (cause: unknown) => Classified,
  schedule: Schedule.Schedule<unknown>
): ProviderCall =>
(operation, call) =>
  waitOut(
    Effect.tryPromise({ try: () => Promise.resolve(call()), catch: classify }),
    schedule,
    (failure) => retryable(failure.reason),
    (failure) => failure.retryAfter
  ).pipe(
    Effect.mapError((failure) => providerError(provider, operation, failure)),
    Effect.withSpan("provider.call", { attributes: { provider, operation } })
  )

/**
 * A failure given the reason the driver knows it by, where its classifier could not tell (a
 * not-found answer to an image lookup is a missing image).
 */
export const withReason = (error: ProviderError, reason: ProviderReason): ProviderError =>
  new ProviderError({
    provider: error.provider,
    operation: error.operation,
    reason,
    ...(error.status === undefined ? {} : { status: error.status }),
    message: error.message
  })
