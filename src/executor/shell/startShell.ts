/**
 * Starting a session's bash: the shell's events (output, prompt, exit) become transitions of the
 * session's state and completions of its running command; the start ends at the first prompt, or
 * fails with `RuntimeStartError` (bash cannot start, exits, or prints no prompt in time).
 */
import { Deferred, Effect, Exit } from "effect"
import { randomUUID } from "node:crypto"
import { RuntimeStartError } from "../../schema/errors.ts"
import { DEFAULT_PIDS_LIMIT } from "./cgroup.ts"
import type { PromptMetadata } from "./prompt.ts"
import type { SessionState } from "./sessionState.ts"
import { ShellProcess } from "./ShellProcess.ts"

const STARTUP_TIMEOUT = "10 seconds"

export interface ShellConfig {
  readonly stateDir: string
  readonly shellPath: string
  readonly env: Readonly<Record<string, string>>
  /** The session's marker; each shell appends its own suffix. */
  readonly marker: string
  readonly loadUserRc: boolean
  readonly pidsLimit: number | undefined
}

/**
 * Spawn a shell in the session's working directory; it becomes the session's shell. What it returns
 * waits for the shell's first prompt (once, however often it is run), so a caller can do other
 * work while bash starts.
 */
export const spawnShell = Effect.fn("BashSession.spawnShell")(function*(state: SessionState, config: ShellConfig) {
  const ready = Deferred.makeUnsafe<PromptMetadata, RuntimeStartError>()
  let proc: ShellProcess
  try {
    proc = new ShellProcess({
      cwd: state.cwd,
      stateDir: config.stateDir,
      shellPath: config.shellPath,
      env: config.env,
      // Per shell, so closing an `is_static` shell reaps only what that shell started.
      marker: `${config.marker}/${randomUUID().slice(0, 8)}`,
      loadUserRc: config.loadUserRc,
      pidsLimit: config.pidsLimit ?? DEFAULT_PIDS_LIMIT
    }, {
      onOutput: (text) => {
        if (proc !== state.shell) return
        const running = state.running
        if (running !== null && !running.ended) running.printed(text)
        else if (Deferred.isDoneUnsafe(ready)) state.printedIdle(text)
      },
      onPrompt: (metadata) => {
        state.promptIn(metadata.workingDir)
        if (!Deferred.isDoneUnsafe(ready)) Deferred.doneUnsafe(ready, Exit.succeed(metadata))
        else state.running?.complete({ _tag: "Prompt", metadata })
      },
      onExit: (exitCode) => {
        // A shell already replaced (killed at the process limit or on interrupt) ends nothing of the new one's.
        const current = state.shellExited(proc)
        Deferred.doneUnsafe(
          ready,
          Exit.fail(new RuntimeStartError({ message: `bash exited with code ${exitCode} while starting.` }))
        )
        if (current) state.running?.complete({ _tag: "Exited", exitCode })
      }
    })
  } catch (cause) {
    return yield* new RuntimeStartError({
      message: `Cannot start ${config.shellPath} in ${state.cwd}: ${String(cause)}`
    })
  }
  state.shellStarted(proc)
  return yield* Effect.cached(
    Deferred.await(ready).pipe(
      Effect.timeoutOrElse({
        duration: STARTUP_TIMEOUT,
        orElse: () => {
          proc.kill()
          return Effect.fail(
            new RuntimeStartError({ message: `bash did not print its prompt within ${STARTUP_TIMEOUT}.` })
          )
        }
      }),
      Effect.map(() => state.dropIdle())
    )
  )
})

/** Start a shell in the session's working directory, up to its first prompt; it becomes the session's shell. */
export const startShell = (state: SessionState, config: ShellConfig) => Effect.flatten(spawnShell(state, config))
