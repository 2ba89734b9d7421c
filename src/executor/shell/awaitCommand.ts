/**
 * Waiting for a running command's observation: whichever comes first of its completion, the
 * no-change (soft) timeout and the action's hard timeout. Interrupted, the command is stopped
 * (Ctrl-C, then its process group, then the shell); at the process limit, the shell is replaced.
 */
import { Deferred, Effect, Option } from "effect"
import type { CmdRunAction } from "../../schema/Action.ts"
import { CmdOutputMetadata, type CmdOutputObservation } from "../../schema/Observation.ts"
import type { SecretMask } from "../../schema/secrets.ts"
import { completed, observation, partial } from "./commandObservation.ts"
import { INTERRUPT_KEY } from "./keys.ts"
import * as Text from "./messages.ts"
import { foregroundProcessGroup, killProcessGroup } from "./processTree.ts"
import type { Completion, OutputListener, RunningCommand } from "./runningCommand.ts"
import type { SessionState } from "./sessionState.ts"

const INTERRUPT_GRACE = "1 second"

type WaitResult =
  | { readonly _tag: "Done"; readonly completion: Completion }
  | { readonly _tag: "Soft" }
  | { readonly _tag: "Hard"; readonly seconds: number }

/** What a wait needs of its session besides the state. */
export interface WaitContext {
  readonly state: SessionState
  readonly mask: SecretMask
  /** OpenHands' NO_CHANGE_TIMEOUT_SECONDS. */
  readonly noChangeTimeoutSeconds: number
}

/** Ends once `r` printed nothing for `seconds` (counted from its last output, which may move on meanwhile). */
const softTimeout = (r: RunningCommand, seconds: number) =>
  Effect.gen(function*() {
    const limit = seconds * 1000
    while (true) {
      const left = limit - (Date.now() - r.lastChange)
      if (left <= 0) return { _tag: "Soft" } as const
      yield* Effect.sleep(left)
    }
  })

/** Stop what `r` runs: Ctrl-C, then SIGKILL its process group, then the shell itself. */
const interrupt = Effect.fn("BashSession.interrupt")(function*(state: SessionState, r: RunningCommand) {
  const settled = () => Deferred.await(r.done).pipe(Effect.timeoutOption(INTERRUPT_GRACE), Effect.map(Option.isSome))
  const shell = state.shell
  if (!r.ended && shell !== null) {
    shell.write(INTERRUPT_KEY)
    if (!(yield* settled())) {
      const group = foregroundProcessGroup(shell.pid)
      if (group !== null && group !== shell.pid) killProcessGroup(group)
      if (!(yield* settled())) state.killShell()
    }
  }
  state.finish(r)
})

/**
 * Forks failed at the process limit while `r` ran: the shell cannot be trusted
 * to start anything (bash itself cannot fork), so kill all it started and say so.
 */
const atProcessLimit = (
  state: SessionState,
  r: RunningCommand,
  action: CmdRunAction,
  obs: CmdOutputObservation
): CmdOutputObservation => {
  const shell = state.shell
  const limit = shell?.pidsLimit
  if (shell === null || limit == null || shell.limitHits() === r.limitHits) return obs
  state.finish(r)
  state.killShell()
  return observation(
    action,
    obs.content,
    new CmdOutputMetadata({ ...obs.metadata, suffix: obs.metadata.suffix + Text.processLimitSuffix(limit) })
  )
}

/** The observation of `r` for `action`; `key` is the control key the action sent, if any. */
export const awaitCommand = (
  { mask, noChangeTimeoutSeconds, state }: WaitContext,
  r: RunningCommand,
  action: CmdRunAction,
  key: string | null,
  onOutput: OutputListener | undefined
): Effect.Effect<CmdOutputObservation> =>
  Effect.suspend(() => {
    r.awaited(onOutput ?? null)
    const racers: Array<Effect.Effect<WaitResult>> = [
      Deferred.await(r.done).pipe(Effect.map((completion) => ({ _tag: "Done", completion }) as const))
    ]
    if (!action.blocking) racers.push(softTimeout(r, noChangeTimeoutSeconds))
    const seconds = action.timeout
    if (seconds !== undefined) {
      racers.push(Effect.as(Effect.sleep(seconds * 1000), { _tag: "Hard", seconds } as const))
    }
    return Effect.raceAll(racers).pipe(
      Effect.map((result) => {
        switch (result._tag) {
          case "Done": {
            const obs = completed(r, result.completion, action, key, mask, state.cwd)
            state.finish(r)
            return obs
          }
          case "Soft":
            return partial(r, action, Text.softTimeoutSuffix(noChangeTimeoutSeconds), mask)
          case "Hard":
            return partial(r, action, Text.hardTimeoutSuffix(result.seconds), mask)
        }
      }),
      Effect.map((obs) => atProcessLimit(state, r, action, obs)),
      Effect.onInterrupt(() => interrupt(state, r)),
      Effect.ensuring(Effect.sync(() => r.unwatched()))
    )
  })
