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
 */
import { Deferred, Effect, Exit, Option, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { CmdRunAction } from "../../schema/Action.ts"
import { MAX_CMD_OUTPUT_SIZE, truncateCmdOutput, truncationNotice } from "../../schema/cmdOutput.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { CmdOutputMetadata, CmdOutputObservation } from "../../schema/Observation.ts"
import { sandboxEnv } from "../childEnv.ts"
import type { EnvStore } from "../env.ts"
import { DEFAULT_PIDS_LIMIT } from "./cgroup.ts"
import { CommandOutput } from "./commandOutput.ts"
import { waitsForMoreInput } from "./incomplete.ts"
import { controlKey, echoOfKey } from "./keys.ts"
import * as Text from "./messages.ts"
import { foregroundProcessGroup, killProcessGroup } from "./processTree.ts"
import type { PromptMetadata } from "./prompt.ts"
import { ShellProcess } from "./ShellProcess.ts"
import { collapseCarriageReturns } from "./terminalText.ts"

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
}

export interface BashSession {
  /** Run an action; `onOutput` sees the command's output as it arrives (for streaming transports). */
  readonly execute: (
    action: CmdRunAction,
    onOutput?: OutputListener
  ) => Effect.Effect<CmdOutputObservation, RuntimeStartError>
  /** The shell's working directory as of its last prompt. */
  readonly cwd: () => string
}

type Completion =
  | { readonly _tag: "Prompt"; readonly metadata: PromptMetadata }
  | { readonly _tag: "Exited"; readonly exitCode: number }

/** Receives a command's output text as it arrives. */
export type OutputListener = (text: string) => void

interface Running {
  readonly output: CommandOutput
  /** The waiting caller's listener, while one waits. */
  listener: OutputListener | null
  readonly done: Deferred.Deferred<Completion>
  /** An observation already returned part of its output (so later ones get the "Below is..." prefix). */
  timedOut: boolean
  lastChange: number
  /** The shell's count of forks refused by the process limit when the command started. */
  readonly limitHits: number
}

type WaitResult =
  | { readonly _tag: "Done"; readonly completion: Completion }
  | { readonly _tag: "Soft" }
  | { readonly _tag: "Hard"; readonly seconds: number }

const STARTUP_TIMEOUT = "10 seconds"
const IDLE_OUTPUT_LIMIT = MAX_CMD_OUTPUT_SIZE
const INTERRUPT_GRACE = "1 second"

/** An observation of `action` (its command as sent, trimmed). */
const observation = (action: CmdRunAction, text: string, metadata: CmdOutputMetadata) =>
  new CmdOutputObservation({ content: text, command: action.command.trim(), metadata, hidden: action.hidden })

/** OpenHands' answer to an empty command or input when nothing runs. */
const noPrevious = (action: CmdRunAction, text: string) =>
  new CmdOutputObservation({
    content: text,
    command: "",
    metadata: new CmdOutputMetadata({}),
    hidden: action.hidden
  })

/** Start a bash session; closing the scope kills it and everything it started. */
export const makeBashSession = (
  options: BashSessionOptions
): Effect.Effect<BashSession, RuntimeStartError, Scope.Scope> =>
  Effect.gen(function*() {
    const outputsDir = join(options.stateDir, "outputs")
    mkdirSync(outputsDir, { recursive: true, mode: 0o700 })
    const scriptFile = join(options.stateDir, "command.sh")
    const baseEnv = options.baseEnv ?? sandboxEnv()
    const shellPath = options.shellPath ?? "/bin/bash"

    let shell: ShellProcess | null = null
    /** Every shell started, so release also kills what a shell that exited left running. */
    const started = new Set<ShellProcess>()
    let cwd = options.cwd
    let running: Running | null = null
    /** Output printed while no command ran (background jobs); shown with the next command, as in a terminal. */
    let idleOutput = ""
    let sourcedEnv = 0
    let commandCount = 0

    const spawn: Effect.Effect<void, RuntimeStartError> = Effect.gen(function*() {
      const ready = Deferred.makeUnsafe<PromptMetadata, RuntimeStartError>()
      let proc: ShellProcess
      try {
        proc = new ShellProcess({
          cwd,
          stateDir: options.stateDir,
          shellPath,
          env: baseEnv,
          // Per shell, so closing an `is_static` shell reaps only what that shell started.
          marker: `${options.marker}/${randomUUID().slice(0, 8)}`,
          loadUserRc: options.loadUserRc ?? false,
          pidsLimit: options.pidsLimit ?? DEFAULT_PIDS_LIMIT
        }, {
          onOutput: (text) => {
            if (proc !== shell) return
            if (running !== null && !Deferred.isDoneUnsafe(running.done)) {
              running.output.append(text)
              running.listener?.(text)
              running.lastChange = Date.now()
            } else if (Deferred.isDoneUnsafe(ready)) {
              idleOutput = (idleOutput + text).slice(-IDLE_OUTPUT_LIMIT)
            }
          },
          onPrompt: (metadata) => {
            if (metadata.workingDir) cwd = metadata.workingDir
            if (!Deferred.isDoneUnsafe(ready)) Deferred.doneUnsafe(ready, Exit.succeed(metadata))
            else if (running !== null) Deferred.doneUnsafe(running.done, Exit.succeed({ _tag: "Prompt", metadata }))
          },
          onExit: (exitCode) => {
            // A shell already replaced (killed at the process limit or on interrupt) ends nothing of the new one's.
            const current = proc === shell
            if (current) shell = null
            Deferred.doneUnsafe(
              ready,
              Exit.fail(new RuntimeStartError({ message: `bash exited with code ${exitCode} while starting.` }))
            )
            if (current && running !== null) {
              Deferred.doneUnsafe(running.done, Exit.succeed({ _tag: "Exited", exitCode }))
            }
          }
        })
      } catch (cause) {
        return yield* new RuntimeStartError({
          message: `Cannot start ${shellPath} in ${cwd}: ${String(cause)}`
        })
      }
      shell = proc
      started.add(proc)
      sourcedEnv = 0
      yield* Deferred.await(ready).pipe(
        Effect.timeoutOrElse({
          duration: STARTUP_TIMEOUT,
          orElse: () => {
            proc.kill()
            return Effect.fail(
              new RuntimeStartError({ message: `bash did not print its prompt within ${STARTUP_TIMEOUT}.` })
            )
          }
        })
      )
      idleOutput = ""
    })

    yield* spawn
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        running?.output.close()
        for (const proc of started) proc.kill()
      })
    )

    const start = (command: string): Effect.Effect<Running, RuntimeStartError> =>
      Effect.gen(function*() {
        if (shell === null) yield* spawn
        const typed = yield* waitsForMoreInput(command, shellPath)
        const sourceEnv = options.env.generation !== sourcedEnv ? `. '${options.env.file}'` : null
        sourcedEnv = options.env.generation
        if (!typed) {
          writeFileSync(scriptFile, `${sourceEnv === null ? "" : `${sourceEnv}\n`}${command}\n`, { mode: 0o600 })
        }
        const r: Running = {
          output: new CommandOutput(join(outputsDir, `command-${++commandCount}.log`)),
          done: Deferred.makeUnsafe<Completion>(),
          timedOut: false,
          listener: null,
          lastChange: Date.now(),
          limitHits: shell!.limitHits()
        }
        r.output.append(idleOutput)
        idleOutput = ""
        running = r
        // `eval` at the prompt, not `. file`: bash prints job notices (`[1] 12345`) only for
        // commands it runs interactively, and a sourced file is not. A command waiting for
        // more lines is typed in instead, so bash waits for them as in a terminal.
        shell!.write(
          typed
            ? `${sourceEnv === null ? "" : `${sourceEnv}; `}${command}\n`
            : `__es_load '${scriptFile}'; eval "$__es_cmd"\n`
        )
        return r
      })

    /**
     * The segment's text as an agent sees it; a truncated one is saved whole and named in the
     * truncation notice. Secrets are masked before the cut, so none is split by it (the saved
     * file keeps the raw output). A partial observation (the command still runs) keeps back an
     * end that may begin a secret, for the next one: a secret printed across two observations
     * is then masked whole instead of shown in two pieces.
     */
    const content = (r: Running, hidden: boolean, partial = false) => {
      let segment = r.output.takeSegment().text
      if (partial) {
        const held = options.env.mask.unfinished(segment)
        r.output.giveBack(held)
        segment = segment.slice(0, segment.length - held)
      }
      const raw = collapseCarriageReturns(segment).replace(/^\n+/, "").trimEnd()
      const text = options.env.mask.text(raw)
      if (hidden || text.length <= MAX_CMD_OUTPUT_SIZE) return text
      const note = Text.fullOutputSavedNote(r.output.length, r.output.saveToFile())
      return truncateCmdOutput(text, truncationNotice(note))
    }

    const killShell = () => {
      shell?.kill()
      if (shell !== null) started.delete(shell)
      shell = null
    }

    /**
     * Forks failed at the process limit while `r` ran: the shell cannot be trusted
     * to start anything (bash itself cannot fork), so kill all it started and say so.
     */
    const atProcessLimit = (r: Running, action: CmdRunAction, obs: CmdOutputObservation): CmdOutputObservation => {
      const limit = shell?.pidsLimit
      if (shell === null || limit == null || shell.limitHits() === r.limitHits) return obs
      finish(r)
      killShell()
      return observation(
        action,
        obs.content,
        new CmdOutputMetadata({ ...obs.metadata, suffix: obs.metadata.suffix + Text.processLimitSuffix(limit) })
      )
    }

    const finish = (r: Running) => {
      if (running === r) running = null
      r.output.close()
    }

    const completed = (r: Running, completion: Completion, action: CmdRunAction, key: string | null) => {
      // An interactive bash's `exit` builtin prints `exit` (or `logout`) as it goes: the terminal's
      // echo of the shell leaving, not the command's output (a sourced script's exit printed none).
      const text = completion._tag === "Exited"
        ? content(r, action.hidden).replace(/(^|\n)(exit|logout)$/, "")
        : content(r, action.hidden)
      finish(r)
      const metadata = completion._tag === "Prompt"
        ? new CmdOutputMetadata({
          ...completion.metadata,
          suffix: Text.completedSuffix(completion.metadata.exitCode, key)
        })
        : new CmdOutputMetadata({
          exitCode: completion.exitCode,
          workingDir: cwd,
          suffix: Text.completedSuffix(completion.exitCode, key) + Text.shellExitedSuffix(completion.exitCode)
        })
      return observation(action, text, metadata)
    }

    const partial = (r: Running, action: CmdRunAction, suffix: string) => {
      const prefix = r.timedOut ? Text.PREVIOUS_OUTPUT_PREFIX : ""
      r.timedOut = true
      return observation(action, content(r, action.hidden, true), new CmdOutputMetadata({ prefix, suffix }))
    }

    const softTimeout = (r: Running) =>
      Effect.gen(function*() {
        const limit = options.noChangeTimeoutSeconds * 1000
        while (true) {
          const left = limit - (Date.now() - r.lastChange)
          if (left <= 0) return { _tag: "Soft" } as const
          yield* Effect.sleep(left)
        }
      })

    /** Stop what `r` runs: Ctrl-C, then SIGKILL its process group, then the shell itself. */
    const interrupt = (r: Running) =>
      Effect.gen(function*() {
        const settled = () =>
          Deferred.await(r.done).pipe(Effect.timeoutOption(INTERRUPT_GRACE), Effect.map(Option.isSome))
        if (!Deferred.isDoneUnsafe(r.done) && shell !== null) {
          shell.write("\x03")
          if (!(yield* settled())) {
            const group = foregroundProcessGroup(shell.pid)
            if (group !== null && group !== shell.pid) killProcessGroup(group)
            if (!(yield* settled())) killShell()
          }
        }
        finish(r)
      })

    const wait = (r: Running, action: CmdRunAction, key: string | null, onOutput: OutputListener | undefined) => {
      r.lastChange = Date.now()
      r.listener = onOutput ?? null
      const racers: Array<Effect.Effect<WaitResult>> = [
        Deferred.await(r.done).pipe(Effect.map((completion) => ({ _tag: "Done", completion }) as const))
      ]
      if (!action.blocking) racers.push(softTimeout(r))
      const seconds = action.timeout
      if (seconds !== undefined) {
        racers.push(Effect.as(Effect.sleep(seconds * 1000), { _tag: "Hard", seconds } as const))
      }
      return Effect.raceAll(racers).pipe(
        Effect.map((result) => {
          switch (result._tag) {
            case "Done":
              return completed(r, result.completion, action, key)
            case "Soft":
              return partial(r, action, Text.softTimeoutSuffix(options.noChangeTimeoutSeconds))
            case "Hard":
              return partial(r, action, Text.hardTimeoutSuffix(result.seconds))
          }
        }),
        Effect.map((obs) => atProcessLimit(r, action, obs)),
        Effect.onInterrupt(() => interrupt(r)),
        Effect.ensuring(Effect.sync(() => (r.listener = null)))
      )
    }

    const execute = (
      action: CmdRunAction,
      onOutput?: OutputListener
    ): Effect.Effect<CmdOutputObservation, RuntimeStartError> =>
      Effect.gen(function*() {
        const command = action.command.trim()
        const current = running
        if (current === null) {
          if (command === "") return noPrevious(action, Text.NO_PREVIOUS_COMMAND_LOGS)
          if (action.isInput) return noPrevious(action, Text.NO_PREVIOUS_COMMAND_INPUT)
          return yield* wait(yield* start(command), action, null, onOutput)
        }
        if (Deferred.isDoneUnsafe(current.done)) {
          // It finished after its last (timed-out) observation. OpenHands drops the leftover
          // output when a new command arrives, and reports the completion for '' or input.
          if (command !== "" && !action.isInput) {
            finish(current)
            return yield* wait(yield* start(command), action, null, onOutput)
          }
          return yield* wait(current, action, null, onOutput)
        }
        if (command !== "" && !action.isInput) {
          return partial(current, action, Text.notExecutedSuffix(command))
        }
        let key: string | null = null
        if (command !== "") {
          key = controlKey(command)
          if (key !== null) {
            current.output.append(echoOfKey(key))
            shell?.write(key)
          } else {
            shell?.write(`${command}\n`)
          }
        }
        return yield* wait(current, action, key === null ? null : command, onOutput)
      })

    return { execute, cwd: () => cwd } satisfies BashSession
  })
