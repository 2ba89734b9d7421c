/**
 * `sandbox.commands.run`: a program's view of a command (its output as text, its exit code,
 * whether it timed out), as E2B's and Daytona's SDKs give it, over `Runtime.spawn`. Each command is
 * a process of its own (`bash -c`, in the workspace unless `cwd` says otherwise, with the session's
 * variables): stdout and stderr stay apart, nothing is cut at the agent's 30,000 characters, and
 * nothing waits for a shell prompt. The agent's persistent shell (OpenHands' semantics) stays the
 * Effect API's `runCommand`.
 */
import { Duration, Effect, Option, Schema, Stream } from "effect"
import { constants } from "node:os"
import { decodeOptions } from "../schema/issues.ts"
import type { ProcessOutput } from "../schema/process.ts"
import type { EnvValue } from "../services/EnvValue.ts"
import type { RuntimeShape } from "../services/Runtime.ts"

/** What a command's output keeps of each stream unless `maxOutputLength` says otherwise (characters). */
export const DEFAULT_MAX_OUTPUT_LENGTH = 1_000_000

export interface RunOptions {
  /** Called with each piece of stdout as it is printed (all of it, even past `maxOutputLength`). */
  readonly onStdout?: (text: string) => void
  /** Called with each piece of stderr as it is printed. */
  readonly onStderr?: (text: string) => void
  /** Seconds before the command (and every process it started) is killed; default: no limit. */
  readonly timeout?: number
  /** Working directory (relative: to the workspace); default the workspace. */
  readonly cwd?: string
  /** Variables on top of the session's; `Redacted` values are masked in the output. */
  readonly env?: Readonly<Record<string, EnvValue>>
  /** Text given as stdin, which is then closed (default: an empty, closed stdin). */
  readonly stdin?: string
  /** Characters of each of stdout and stderr kept in the result (default 1,000,000); more sets `truncated`. */
  readonly maxOutputLength?: number
  /** Aborting kills the command; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal
}

export interface CommandResult {
  /** What the command printed on stdout (its first `maxOutputLength` characters). */
  readonly stdout: string
  readonly stderr: string
  /**
   * Its exit code; 128 + the signal's number when a signal ended it (as a shell reports it);
   * `null` when it timed out.
   */
  readonly exitCode: number | null
  /** It ran past `timeout` and was killed with everything it started. */
  readonly timedOut: boolean
  /** stdout or stderr was longer than `maxOutputLength`: the callbacks saw all of it, the result does not hold it. */
  readonly truncated: boolean
}

/** The numbers among the options, checked before the command starts (a bad one is an `InvalidOptionsError`). */
const checkRunOptions = decodeOptions(
  Schema.Struct({
    timeout: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0))),
    maxOutputLength: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
  }),
  "commands.run options"
)

/** One stream's text, kept up to `limit` characters. */
class Kept {
  text = ""
  truncated = false
  readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }
  add(piece: string) {
    const room = this.limit - this.text.length
    if (piece.length > room) this.truncated = true
    this.text += room > 0 ? piece.slice(0, room) : ""
  }
}

/** A shell's exit code for an exit: its code, or 128 + the number of the signal that ended it. */
const exitCodeOf = (exit: { readonly exitCode: number | null; readonly signal: string | null }): number | null => {
  if (exit.exitCode !== null) return exit.exitCode
  const number = exit.signal === null ? undefined : constants.signals[exit.signal as keyof typeof constants.signals]
  return number === undefined ? null : 128 + number
}

/** Run `command` to its end (or its timeout), in a scope of its own: closing it kills what is left. */
export const runCommand = Effect.fn("promise.commands.run")(
  function*(rt: RuntimeShape, command: string, options: RunOptions) {
    yield* checkRunOptions({
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      ...(options.maxOutputLength === undefined ? {} : { maxOutputLength: options.maxOutputLength })
    })
    const handle = yield* rt.spawn(command, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env })
    })
    // A command that ends before reading its input is no failure (as a pipe's reader that went away).
    const input = options.stdin === undefined || options.stdin === "" ? Effect.void : handle.write(options.stdin)
    yield* Effect.andThen(Effect.catchTag(input, "ProcessError", () => Effect.void), handle.closeStdin)
    const limit = options.maxOutputLength ?? DEFAULT_MAX_OUTPUT_LENGTH
    const kept = { stdout: new Kept(limit), stderr: new Kept(limit) }
    const onPiece = ({ stream, text }: ProcessOutput) =>
      Effect.sync(() => {
        kept[stream].add(text)
        ;(stream === "stdout" ? options.onStdout : options.onStderr)?.(text)
      })
    const ran = Effect.andThen(Stream.runForEach(handle.output, onPiece), handle.wait)
    const exit = options.timeout === undefined
      ? Option.some(yield* ran)
      : yield* Effect.timeoutOption(ran, Duration.seconds(options.timeout))
    return {
      stdout: kept.stdout.text,
      stderr: kept.stderr.text,
      exitCode: Option.match(exit, { onNone: () => null, onSome: exitCodeOf }),
      timedOut: Option.isNone(exit),
      truncated: kept.stdout.truncated || kept.stderr.truncated
    } satisfies CommandResult
  },
  Effect.scoped
)
