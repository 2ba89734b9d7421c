/**
 * Background processes (`Runtime.spawn`): what is started, what it prints and how it
 * ended, as Schemas, because the same values cross the wire (`/v1/processes`, NDJSON)
 * and are decoded there, not trusted.
 */
import { Schema } from "effect"

/** A process to start: `bash -c <command>` in `cwd` (default: the workspace) with `env` on top of the session's. */
export const ProcessSpec = Schema.Struct({
  command: Schema.String,
  cwd: Schema.optionalKey(Schema.String),
  env: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** Names in `env` whose values are secrets: masked in the output of every tool from now on. */
  secrets: Schema.optionalKey(Schema.Array(Schema.String))
})
export type ProcessSpec = typeof ProcessSpec.Type

/** A started process: the session's id for it (what the other calls take) and its pid. */
export const ProcessStarted = Schema.Struct({ id: Schema.String, pid: Schema.Number })
export type ProcessStarted = typeof ProcessStarted.Type

/** A piece of a process's output, as it was read, with the stream it came from. */
export const ProcessOutput = Schema.Struct({
  stream: Schema.Literals(["stdout", "stderr"]),
  text: Schema.String
})
export type ProcessOutput = typeof ProcessOutput.Type

/** How a process ended: its exit code, or the signal that killed it (the other is null). */
export const ProcessExit = Schema.Struct({
  exitCode: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String)
})
export type ProcessExit = typeof ProcessExit.Type

/** A process the session does not hold (never started, or its scope closed); the wire answers 404. */
export class ProcessNotFoundError extends Schema.TaggedError<ProcessNotFoundError>()("ProcessNotFoundError", {
  id: Schema.String,
  message: Schema.String
}) {}

/**
 * A process request refused, nothing changed: a `cwd` outside the workspace, the session's
 * process limit reached, an unknown signal, stdin already closed. The wire answers 400.
 */
export class ProcessError extends Schema.TaggedError<ProcessError>()("ProcessError", {
  message: Schema.String
}) {}

/** The message of an unknown id, the same in process and on the wire. */
export const processNotFound = (id: string) =>
  new ProcessNotFoundError({
    id,
    message: `No background process ${id} in this session (its scope closed, or it never existed).`
  })
