/**
 * How the set-up steps run commands: through `Runtime.run`, so they work on every runtime and every
 * output passes the runtime's secret masking; hidden (not the agent's) and blocking (no no-change
 * timeout: a clone or a set-up script may be silent for minutes).
 */
import { Effect } from "effect"
import { CmdRunAction } from "../schema/Action.ts"
import { CmdOutputObservation } from "../schema/Observation.ts"
import { Runtime } from "../services/Runtime.ts"

export interface CommandResult {
  readonly content: string
  /** -1 when the runtime answered with an ErrorObservation (e.g. a directory outside the workspace). */
  readonly exitCode: number
}

export interface CommandOptions {
  /** Run in a fresh shell in `cwd` (OpenHands' `is_static`), leaving the session shell's directory alone. */
  readonly cwd?: string
  /** Hard timeout in seconds (default: the runtime's, 120 s). */
  readonly timeout?: number
}

export const runSetupCommand = Effect.fn("workspace.runSetupCommand")(
  function*(command: string, options: CommandOptions = {}) {
    const rt = yield* Runtime
    const obs = yield* rt.run(
      new CmdRunAction({
        command,
        hidden: true,
        blocking: true,
        isStatic: options.cwd !== undefined,
        cwd: options.cwd ?? null,
        ...(options.timeout === undefined ? {} : { timeout: options.timeout })
      })
    )
    return obs instanceof CmdOutputObservation
      ? { content: obs.content, exitCode: obs.metadata.exitCode }
      : { content: "content" in obs ? String(obs.content) : "", exitCode: -1 }
  }
)
