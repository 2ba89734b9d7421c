/**
 * Typed failures of the runtime itself (DESIGN principle 2). Problems inside an
 * action are observations instead. Each message says what to do next.
 */
import { Schema } from "effect"

/**
 * Why a provider refused or failed a call, as a caller acts on it: wait and retry (`rate-limited`,
 * `unavailable`, `transition`), fix credentials (`unauthorized`, `forbidden`), free or buy capacity
 * (`quota`), fix the image or template (`image-missing`), change the request (`invalid`,
 * `unschedulable`), or nothing to do (`not-found` on a delete). `unknown` when the provider's answer
 * says nothing a caller could act on.
 */
export const ProviderReason = Schema.Literals([
  "unauthorized",
  "forbidden",
  "rate-limited",
  "quota",
  "not-found",
  "conflict",
  "transition",
  "unavailable",
  "image-missing",
  "unschedulable",
  "invalid",
  "timeout",
  "unknown"
])
export type ProviderReason = typeof ProviderReason.Type

/**
 * A call to a sandbox provider (Docker's engine, a Kubernetes apiserver, a cloud's API) failed:
 * which provider, what we were doing, why (`reason`), and the HTTP status where there was one. The
 * message is one line: "<provider> could not <operation>: <the provider's own text>".
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  operation: Schema.String,
  reason: ProviderReason,
  status: Schema.optionalKey(Schema.Number),
  message: Schema.String
}) {}

/**
 * How a start failed: the provider refused (`provider` carries its error), the action server
 * exited before it answered (`exitCode` and `output` carry its last words), the server did not
 * answer `/alive` in time, or anything else (`other`: options the provider took but the sandbox
 * could not honour, a missing SDK).
 */
export const StartFailureReason = Schema.Literals(["provider", "server-exited", "alive-timeout", "other"])
export type StartFailureReason = typeof StartFailureReason.Type

/**
 * The runtime could not be started (bad config, missing binary, server never became alive).
 * `reason` (absent: `other`) says which kind of failure it was, so a caller can retry a rate limit
 * and report a broken image without parsing the message.
 */
export class RuntimeStartError extends Schema.TaggedError<RuntimeStartError>()("RuntimeStartError", {
  message: Schema.String,
  reason: Schema.optionalKey(StartFailureReason),
  provider: Schema.optionalKey(ProviderError),
  exitCode: Schema.optionalKey(Schema.Number),
  output: Schema.optionalKey(Schema.String)
}) {}

/** A start failure made of a provider's refusal: its message, with the refusal as data. */
export const providerStartError = (error: ProviderError): RuntimeStartError =>
  new RuntimeStartError({ message: error.message, reason: "provider", provider: error })

/**
 * A start's failure with a provider's refusal made a start error (`providerStartError`), any other
 * failure as it is: for `Effect.mapError` where a start meets both.
 */
export const refusalAsStartError = <E extends { readonly _tag: string }>(
  error: E
): Exclude<E, ProviderError> | RuntimeStartError =>
  error instanceof ProviderError ? providerStartError(error) : error as Exclude<E, ProviderError>

/**
 * Pausing or resuming the sandbox failed at the provider (`provider` carries why). The runtime's
 * status is unchanged: a failed pause leaves it running, a failed resume leaves it paused.
 */
export class RuntimePauseError extends Schema.TaggedError<RuntimePauseError>()("RuntimePauseError", {
  operation: Schema.Literals(["pause", "resume"]),
  provider: Schema.optionalKey(ProviderError),
  message: Schema.String
}) {}

/** The runtime stopped answering (process died, connection dropped). Start a new runtime. */
export class RuntimeDisconnectedError extends Schema.TaggedError<RuntimeDisconnectedError>()(
  "RuntimeDisconnectedError",
  { message: Schema.String }
) {}

/** The runtime did not return an observation within the action's timeout plus a grace period. */
export class RuntimeTimeoutError extends Schema.TaggedError<RuntimeTimeoutError>()("RuntimeTimeoutError", {
  message: Schema.String
}) {}

/** The action server refused a request (a 4xx other than 429); the message is its `detail`. */
export class RuntimeRequestError extends Schema.TaggedError<RuntimeRequestError>()("RuntimeRequestError", {
  status: Schema.Number,
  message: Schema.String
}) {}

/**
 * The runtime is paused (status PAUSED): the action was not sent. `resume` first, or build the
 * layer with `whilePaused: "wait"` to have actions wait for the resume instead.
 */
export class RuntimePausedError extends Schema.TaggedError<RuntimePausedError>()("RuntimePausedError", {
  message: Schema.String
}) {}

/** JSON that is not a valid OpenHands action or observation. */
export class WireDecodeError extends Schema.TaggedError<WireDecodeError>()("WireDecodeError", {
  message: Schema.String
}) {}

/** Copying files into or out of the sandbox failed (missing source, path outside the workspace, bad zip). */
export class TransferError extends Schema.TaggedError<TransferError>()("TransferError", {
  message: Schema.String
}) {}

/** The message of an `InvalidEnvVarError`. */
export const invalidEnvMessage = (names: ReadonlyArray<string>): string =>
  `Invalid environment variable names: ${names.join(", ")}. Use letters, digits and _ only.`

/** Environment variables with names a shell cannot export, or secrets too short to mask; nothing was changed. */
export class InvalidEnvVarError extends Schema.TaggedError<InvalidEnvVarError>()("InvalidEnvVarError", {
  names: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/** The runtime cannot do this (e.g. `pause` on a runtime with nothing to pause). */
export class UnsupportedCapabilityError extends Schema.TaggedError<UnsupportedCapabilityError>()(
  "UnsupportedCapabilityError",
  { capability: Schema.String, runtime: Schema.String, message: Schema.String }
) {}

/**
 * Options or action fields that break a rule (a negative timeout, a bad volumes string, a workspace
 * that cannot be a directory); nothing was started or run. The message is one line naming the field.
 */
export class InvalidOptionsError extends Schema.TaggedError<InvalidOptionsError>()("InvalidOptionsError", {
  message: Schema.String
}) {}

/** Any failure of the runtime (not of an action). */
export type RuntimeError =
  | RuntimeStartError
  | RuntimePauseError
  | RuntimeDisconnectedError
  | RuntimeTimeoutError
  | RuntimeRequestError
  | RuntimePausedError
