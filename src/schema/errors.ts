/**
 * Typed failures of the runtime itself (DESIGN principle 2). Problems inside an
 * action are observations instead. Each message says what to do next.
 */
import { Schema } from "effect"

/** The runtime could not be started (bad config, missing binary, server never became alive). */
export class RuntimeStartError extends Schema.TaggedError<RuntimeStartError>()("RuntimeStartError", {
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
  | RuntimeDisconnectedError
  | RuntimeTimeoutError
  | RuntimeRequestError
  | RuntimePausedError
