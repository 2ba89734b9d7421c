/**
 * A persistent bash session that runs `CmdRunAction`s with OpenHands' semantics
 * (spec §4): PS1 metadata, the no-change (soft) timeout, hard timeouts, input and
 * control keys to a running process, "previous command still running" refusals,
 * output truncation. Completion is the prompt event itself, so a command returns
 * the moment bash prints its prompt (OpenHands polls every 0.5 s).
 *
 * Departures, on purpose: a multi-line action runs as one script (OpenHands
 * rejects it); a truncated output is also saved whole to a file named in the
 * truncation notice; leading blank lines are trimmed but indentation is kept
 * (OpenHands' echo stripping also ate the first line's indentation); `exit`
 * restarts the shell instead of leaving the session dead.
 *
 * The parts are modules of their own: what the session keeps (`sessionState.ts`),
 * starting a shell (`startShell.ts`), one command (`runningCommand.ts`), waiting
 * for it (`awaitCommand.ts`) and its observations (`commandObservation.ts`).
 */
import { Effect, type Scope } from "effect"
import { closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import type { CmdRunAction } from "../../schema/Action.ts"
import type { RuntimeStartError } from "../../schema/errors.ts"
import type { CmdOutputObservation } from "../../schema/Observation.ts"
import { sandboxEnv } from "../childEnv.ts"
import type { EnvStore } from "../env.ts"
import { awaitCommand, type WaitContext } from "./awaitCommand.ts"
import { noPrevious, partial } from "./commandObservation.ts"
import { waitsForMoreInput } from "./incomplete.ts"
import { controlKey, echoOfKey, INTERRUPT_KEY } from "./keys.ts"
import { pressInterrupt } from "./lostKey.ts"
import * as Text from "./messages.ts"
import type { OutputListener, RunningCommand } from "./runningCommand.ts"
import { SessionState } from "./sessionState.ts"
import { type ShellConfig, spawnShell, startShell } from "./startShell.ts"
import { typedScript } from "./typedLine.ts"

export type { OutputListener } from "./runningCommand.ts"

export interface BashSessionOptions {
  readonly cwd: string
  /** Private, existing directory for the rc file, scripts and spilled outputs. */
  readonly stateDir: string
  readonly env: EnvStore
  /** OpenHands' NO_CHANGE_TIMEOUT_SECONDS (10 in its server). */
  readonly noChangeTimeoutSeconds: number
  /** Identifies processes of this runtime for reaping; each shell appends its own suffix. */
  readonly marker: string
  readonly shellPath?: string
  /** Source `~/.bashrc` before our prompt setup (off by default: the host user's rc is not the sandbox's). */
  readonly loadUserRc?: boolean
  /** Environment of the shell; defaults to this process's. */
  readonly baseEnv?: Readonly<Record<string, string>>
  /** Most processes the runtime's shells may have at once where a pids cgroup is available (default 1024). */
  readonly pidsLimit?: number
  /** Return once bash is spawned, not at its first prompt (default true): `started` waits for that. */
  readonly awaitPrompt?: boolean
}

export interface BashSession {
  /** Run an action; `onOutput` sees the command's output as it arrives (for streaming transports). */
  readonly execute: (
    action: CmdRunAction,
    onOutput?: OutputListener
  ) => Effect.Effect<CmdOutputObservation, RuntimeStartError>
  /** The shell's working directory as of its last prompt. */
  readonly cwd: () => string
  /** Ends once the first shell has printed its prompt; fails as its start failed. */
  readonly started: Effect.Effect<void, RuntimeStartError>
}

/**
 * Put the next command in the script file that `__es_load` reads up to its NUL (prompt.ts), written
 * over the old one in place. Not truncated: on ext4, truncating a file and writing it again makes
 * the close start writeback that the next truncation waits for (`auto_da_alloc`), ~0.2 ms a command;
 * bytes of a longer earlier command after the NUL are never read.
 */
const writeScript = (file: string, script: string): void => {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT, 0o600)
  try {
    writeSync(fd, `${script}\0`, 0)
  } finally {
    closeSync(fd)
  }
}

/** Start a bash session; closing the scope kills it and everything it started. */
export const makeBashSession = (
  options: BashSessionOptions
): Effect.Effect<BashSession, RuntimeStartError, Scope.Scope> =>
  Effect.gen(function*() {
    const outputsDir = join(options.stateDir, "outputs")
    mkdirSync(outputsDir, { recursive: true, mode: 0o700 })
    const scriptFile = join(options.stateDir, "command.sh")
    const config: ShellConfig = {
      stateDir: options.stateDir,
      shellPath: options.shellPath ?? "/bin/bash",
      env: options.baseEnv ?? sandboxEnv(),
      marker: options.marker,
      loadUserRc: options.loadUserRc ?? false,
      pidsLimit: options.pidsLimit
    }
    const state = new SessionState(options.cwd, outputsDir)
    const waits: WaitContext = {
      state,
      mask: options.env.mask,
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds
    }

    const sessionScope = yield* Effect.scope
    const spawned = yield* spawnShell(state, config)
    yield* Effect.addFinalizer(() => state.end)
    let prompted = false
    const started = Effect.map(spawned, () => {
      prompted = true
    })
    if (options.awaitPrompt !== false) yield* started

    /**
     * The line that has bash `eval` `script` at the prompt, not `. file`: bash prints job notices
     * (`[1] 12345`) only for commands it runs interactively, and a sourced file is not. The
     * script goes in the line itself where the terminal can carry it (typedLine.ts), else in the
     * script file. A command waiting for more lines is typed in as it is instead, so bash waits
     * for them as in a terminal.
     */
    const scriptLine = (script: string): string => {
      const quoted = typedScript(script)
      // The file's path goes last all the same: `$_` as the command starts stays what it was.
      if (quoted !== null) return `__es_run ${quoted} '${scriptFile}'; eval "$__es_cmd"\n`
      writeScript(scriptFile, script)
      return `__es_load '${scriptFile}'; eval "$__es_cmd"\n`
    }

    /** Send `command` to the shell (started first if there is none) as a new running command. */
    const start = Effect.fnUntraced(function*(command: string) {
      // A command never goes to a shell before its first prompt.
      if (!prompted) yield* started
      if (state.shell === null) yield* startShell(state, config)
      const typed = yield* waitsForMoreInput(command, config.shellPath)
      const sourceEnv = state.sourceEnv(options.env)
      const line = typed
        ? `${sourceEnv === null ? "" : `${sourceEnv}; `}${command}\n`
        : scriptLine(`${sourceEnv === null ? "" : `${sourceEnv}\n`}${command}\n`)
      const r = state.begin()
      state.shell!.write(line)
      return r
    })

    const startAndAwait = (command: string, action: CmdRunAction, onOutput: OutputListener | undefined) =>
      Effect.flatMap(start(command), (r) => awaitCommand(waits, r, action, null, onOutput))

    /** Input or a control key for `current`, which still runs; an empty command only waits for more output. */
    const sendInput = (current: RunningCommand, command: string, action: CmdRunAction, onOutput?: OutputListener) => {
      let key: string | null = null
      let lostKeyWatch: Effect.Effect<void> | null = null
      if (command !== "") {
        key = controlKey(command)
        if (key !== null) {
          current.output.append(echoOfKey(key))
          if (key === INTERRUPT_KEY) lostKeyWatch = pressInterrupt(state, current)
          else state.shell?.write(key)
        } else {
          state.shell?.write(`${command}\n`)
        }
      }
      const waited = awaitCommand(waits, current, action, key === null ? null : command, onOutput)
      return lostKeyWatch === null ? waited : Effect.andThen(Effect.forkIn(lostKeyWatch, sessionScope), waited)
    }

    /**
     * Untraced, as `start` is: the action's own span (runtime/telemetry.ts) already covers the
     * call, and a span and call-site stack per step cost ~5 µs each of every command.
     */
    const execute = Effect.fnUntraced(function*(action: CmdRunAction, onOutput?: OutputListener) {
      const command = action.command.trim()
      const current = state.running
      if (current === null) {
        if (command === "") return noPrevious(action, Text.NO_PREVIOUS_COMMAND_LOGS)
        if (action.isInput) return noPrevious(action, Text.NO_PREVIOUS_COMMAND_INPUT)
        return yield* startAndAwait(command, action, onOutput)
      }
      if (current.ended) {
        // It finished after its last (timed-out) observation. OpenHands drops the leftover
        // output when a new command arrives, and reports the completion for '' or input.
        if (command !== "" && !action.isInput) {
          state.finish(current)
          return yield* startAndAwait(command, action, onOutput)
        }
        return yield* awaitCommand(waits, current, action, null, onOutput)
      }
      if (command !== "" && !action.isInput) {
        // Its observation shows the output since the last one: so do its chunks.
        if (onOutput !== undefined) current.output.deliver(onOutput)
        return partial(current, action, Text.notExecutedSuffix(command), options.env.mask)
      }
      return yield* sendInput(current, command, action, onOutput)
    })

    return { execute, cwd: () => state.cwd, started } satisfies BashSession
  })
