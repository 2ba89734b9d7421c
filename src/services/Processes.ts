/**
 * Background processes, as E2B's `commands.run({ background: true })` offers them, the Effect way:
 * `Runtime.spawn` gives a `ProcessHandle` that lives in a `Scope`; closing the scope kills the
 * process and everything it started. `ProcessControl` is the same by id, without scopes: what the
 * executor implements and what a transport (the HTTP client, TestRuntime) carries.
 */
import type { Effect, Stream } from "effect"
import type {
  ProcessError,
  ProcessExit,
  ProcessNotFoundError,
  ProcessOutput,
  ProcessSpec,
  ProcessStarted
} from "../schema/process.ts"
import type { EnvValue } from "./EnvValue.ts"

export interface SpawnOptions {
  /** Working directory (relative: to the session shell's); default the workspace. Within it on CliRuntime. */
  readonly cwd?: string
  /** Variables on top of the session's; `Redacted` values are masked in the output of every tool. */
  readonly env?: Readonly<Record<string, EnvValue>>
  /** Text written to stdin at once, which is then closed (for a process that reads its input to the end). */
  readonly stdin?: string
}

/** A running (or exited) background process, valid until the scope it was spawned in closes. */
export interface ProcessHandle<E = never> {
  /** The session's id for the process (the wire's `/v1/processes/{id}`). */
  readonly id: string
  /** Its pid in the sandbox. */
  readonly pid: number
  /**
   * Its output since it started (what is kept: `EFFECT_SANDBOX_MAX_PROCESS_OUTPUT_BYTES`), then as
   * it comes, ending when the process and everything holding its stdout and stderr exited.
   * Every subscriber gets all of it.
   */
  readonly output: Stream.Stream<ProcessOutput, ProcessNotFoundError | E>
  /** Write text to its stdin (a `ProcessError` once stdin is closed). */
  readonly write: (text: string) => Effect.Effect<void, ProcessNotFoundError | ProcessError | E>
  /** Close its stdin (end of input); closing it twice is fine. */
  readonly closeStdin: Effect.Effect<void, ProcessNotFoundError | E>
  /** Send a signal (`SIGTERM`, `SIGINT`, ...) to its process group; after its exit, nothing happens. */
  readonly signal: (signal: string) => Effect.Effect<void, ProcessNotFoundError | ProcessError | E>
  /** How it ended, once it exited and its output was read to the end. */
  readonly wait: Effect.Effect<ProcessExit, ProcessNotFoundError | E>
}

/** Background processes by id: the executor's manager, or a transport to one. */
export interface ProcessControl<E = never> {
  readonly start: (spec: ProcessSpec) => Effect.Effect<ProcessStarted, ProcessError | E>
  /** The process looked up (and, over HTTP, the response's headers), then its output. */
  readonly output: (id: string) => Effect.Effect<Stream.Stream<ProcessOutput, E>, ProcessNotFoundError | E>
  readonly write: (id: string, text: string) => Effect.Effect<void, ProcessNotFoundError | ProcessError | E>
  readonly closeStdin: (id: string) => Effect.Effect<void, ProcessNotFoundError | E>
  readonly signal: (id: string, signal: string) => Effect.Effect<void, ProcessNotFoundError | ProcessError | E>
  readonly wait: (id: string) => Effect.Effect<ProcessExit, ProcessNotFoundError | E>
  /** Kill the process tree (if still running) and forget it: its id is unknown afterwards. */
  readonly remove: (id: string) => Effect.Effect<void, ProcessNotFoundError | E>
}
