/**
 * What a bash session keeps between commands, in one place: the current shell (none after it
 * exited or was killed, until the next command starts one), every shell started (so the session's
 * end kills what an exited one left running), the working directory as of the last prompt, the
 * running command, output printed while none ran, and the env file's generation the shell sourced.
 * The shell's event callbacks and the session's effects change it only through these transitions.
 */
import { Effect } from "effect"
import { join } from "node:path"
import { MAX_CMD_OUTPUT_SIZE } from "../../schema/cmdOutput.ts"
import type { EnvStore } from "../env.ts"
import { RunningCommand } from "./runningCommand.ts"
import type { ShellProcess } from "./ShellProcess.ts"

/** Output printed while no command ran is kept up to this many characters (the newest). */
const IDLE_OUTPUT_LIMIT = MAX_CMD_OUTPUT_SIZE

export class SessionState {
  #shell: ShellProcess | null = null
  readonly #started = new Set<ShellProcess>()
  #cwd: string
  #running: RunningCommand | null = null
  /** Output printed while no command ran (background jobs); shown with the next command, as in a terminal. */
  #idleOutput = ""
  #sourcedEnv = 0
  #commands = 0
  readonly #outputsDir: string

  constructor(cwd: string, outputsDir: string) {
    this.#cwd = cwd
    this.#outputsDir = outputsDir
  }

  get shell(): ShellProcess | null {
    return this.#shell
  }

  get cwd(): string {
    return this.#cwd
  }

  get running(): RunningCommand | null {
    return this.#running
  }

  /** `proc` started: it is the shell now, and has sourced no env file yet. */
  shellStarted(proc: ShellProcess): void {
    this.#shell = proc
    this.#started.add(proc)
    this.#sourcedEnv = 0
  }

  /** `proc` exited: whether it was the current shell (one already replaced ends nothing of the new one's). */
  shellExited(proc: ShellProcess): boolean {
    if (proc !== this.#shell) return false
    this.#shell = null
    return true
  }

  /** Kill the current shell and everything it started; the next command starts a new one. */
  killShell(): void {
    const shell = this.#shell
    if (shell === null) return
    shell.kill()
    this.#started.delete(shell)
    this.#shell = null
  }

  /**
   * The session ends: every shell and what it started killed, the running command's output
   * closed. The kill reads /proc and cgroupfs synchronously on purpose (processTree.ts: one
   * snapshot signalled without yielding, so nothing forks past it).
   */
  readonly end: Effect.Effect<void> = Effect.suspend(() => {
    for (const proc of this.#started) proc.kill()
    const output = this.#running?.output
    return output === undefined ? Effect.void : Effect.tryPromise({
      try: () => output.release(),
      catch: (cause) => `cannot close ${output.spillPath}: ${String(cause)}`
    }).pipe(Effect.catch((message) => Effect.logWarning(message)))
  })

  /** A prompt reported `dir` as the working directory. */
  promptIn(dir: string | null): void {
    if (dir) this.#cwd = dir
  }

  /** The shell printed `text` while no command ran. */
  printedIdle(text: string): void {
    this.#idleOutput = (this.#idleOutput + text).slice(-IDLE_OUTPUT_LIMIT)
  }

  /** Idle output so far is not shown (what the shell printed while it started). */
  dropIdle(): void {
    this.#idleOutput = ""
  }

  /** The command to source the env file when it changed since the shell last did (null: unchanged); now sourced. */
  sourceEnv(env: EnvStore): string | null {
    const command = env.generation !== this.#sourcedEnv ? `. '${env.file}'` : null
    this.#sourcedEnv = env.generation
    return command
  }

  /** A command starts on the current shell, with the idle output before its own. */
  begin(): RunningCommand {
    const running = new RunningCommand(
      join(this.#outputsDir, `command-${++this.#commands}.log`),
      this.#shell!.limitHits()
    )
    running.output.append(this.#idleOutput)
    this.#idleOutput = ""
    this.#running = running
    return running
  }

  /** `r` is over (its observation given, or dropped for a new command): its output is closed. */
  finish(r: RunningCommand): void {
    if (this.#running === r) this.#running = null
    r.output.close()
  }
}
