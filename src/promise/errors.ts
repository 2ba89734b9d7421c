/**
 * The Promise API's errors: what an Effect of this library fails with, thrown as an `Error` a
 * plain `try`/`catch` (and every logger, test runner and `instanceof Error` check) understands,
 * keeping what an Effect user matches on: the typed error's `_tag` on the thrown error, the typed
 * error itself as its `cause`.
 */
import { Cause, Data, Exit, Option, Result } from "effect"

/** What every typed failure of this library is: a tag to match on and a one-line message. */
export interface TaggedFailure {
  readonly _tag: string
  readonly message: string
}

/**
 * A file action answered with an error text (`File not found: ...`, a path outside the
 * workspace, a binary file): in the Effect API an `ErrorObservation` for the agent to read, in the
 * Promise API a failure, as `fs.readFile` would fail.
 */
export class FileError extends Data.TaggedError("FileError")<{
  readonly path: string
  readonly message: string
}> {}

/**
 * A failure of the sandbox or of a call to it, thrown by every method of the Promise API.
 * `_tag` is the typed error's (`RuntimeStartError`, `InvalidOptionsError`, `FileError`,
 * `RuntimeDisconnectedError`, ...), `message` its one line, and `cause` the typed error itself.
 */
export class SandboxError<T extends TaggedFailure = TaggedFailure> extends Error {
  override readonly name = "SandboxError"
  readonly _tag: T["_tag"]
  override readonly cause: T

  constructor(cause: T) {
    super(cause.message, { cause })
    this._tag = cause._tag
    this.cause = cause
  }
}

const isTagged = (error: unknown): error is TaggedFailure =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" &&
  "message" in error && typeof error.message === "string"

/**
 * The value a Promise of the API settles with, from its Effect's exit: the success, a typed
 * failure as a `SandboxError`, a defect as itself (a bug, or a callback of the caller that threw),
 * and an interruption by the caller's `AbortSignal` as the signal's reason, as `fetch` rejects.
 */
export const settle = <A>(exit: Exit.Exit<A, unknown>, signal?: AbortSignal): A => {
  if (Exit.isSuccess(exit)) return exit.value
  const cause = exit.cause
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) throw isTagged(failure.value) ? new SandboxError(failure.value) : failure.value
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) throw defect.success
  if (signal?.aborted === true) throw signal.reason
  throw Cause.squash(cause)
}
