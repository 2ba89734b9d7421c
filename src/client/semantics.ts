/**
 * What OpenHands' wire says only in its texts, as values an SDK user can match on. The wire stays
 * exactly OpenHands' (agents and prompts rely on it); these read it:
 *
 * - `commandOutcome`: a command's observation says whether it completed (and with which exit code),
 *   is still running after a time-out (both time-outs leave it running), or was not executed at all
 *   because the previous command still runs (`exitCode` -1, said only in the text).
 * - `editFailure`: a failed editor command is a `FileEditObservation` whose content starts with
 *   `ERROR:` (not an `ErrorObservation`); this gives its message, or `undefined` when it succeeded.
 * - `writtenText`: what `FileWriteAction` puts in a file, a newline after every line.
 * - `runCommandKillOnTimeout`: a command that is still running when its time-out ends is
 *   interrupted (`C-c`, as an agent would send it), instead of left running.
 */
import { Effect } from "effect"
import { writtenLines } from "../executor/files/lines.ts"
import { TIMEOUT_MESSAGE_TEMPLATE } from "../executor/shell/messages.ts"
import { CmdRunAction } from "../schema/Action.ts"
import type { CmdOutputObservation, ErrorObservation, FileEditObservation } from "../schema/Observation.ts"
import type { ActionFields, RuntimeShape } from "../services/Runtime.ts"

/** How a command step ended, as its observation tells. */
export type CommandOutcome =
  | { readonly _tag: "Completed"; readonly exitCode: number }
  /** The time-out ended the wait, not the command: it runs on (send `""`, input, or `C-c`). */
  | { readonly _tag: "StillRunning"; readonly timeout: "no-change" | "hard" }
  /** Refused: the previous command still runs, so this one never started (`exitCode` -1). */
  | { readonly _tag: "NotExecuted" }
  /** No exit code and none of the above (e.g. an interactive step whose process went on). */
  | { readonly _tag: "Unknown" }

/** The end of every time-out and refusal text OpenHands appends to a command's output. */
const WAIT_HINT = `${TIMEOUT_MESSAGE_TEMPLATE}]`

/** What a command's observation says about the command (read from its metadata, never the output). */
export const commandOutcome = (observation: CmdOutputObservation): CommandOutcome => {
  const { exitCode, suffix } = observation.metadata
  if (suffix.endsWith(WAIT_HINT)) {
    if (suffix.startsWith("\n[Your command \"")) return { _tag: "NotExecuted" }
    if (suffix.startsWith("\n[The command timed out after ")) return { _tag: "StillRunning", timeout: "hard" }
    if (suffix.startsWith("\n[The command has no new output after ")) {
      return { _tag: "StillRunning", timeout: "no-change" }
    }
  }
  return exitCode === -1 ? { _tag: "Unknown" } : { _tag: "Completed", exitCode }
}

/** The message of a failed editor command (its content after `ERROR:`), or `undefined` when it succeeded. */
export const editFailure = (observation: FileEditObservation): string | undefined =>
  observation.content.startsWith("ERROR:") ? observation.content.slice("ERROR:".length).trimStart() : undefined

/** The text a `FileWriteAction` of `content` leaves in a new file: every line ends with a newline. */
export const writtenText = (content: string): string => writtenLines(content).join("")

/** A command step and, when it was still running at its time-out, the step that interrupted it. */
export interface KilledOnTimeout {
  readonly observation: CmdOutputObservation | ErrorObservation
  /** The `C-c` step's observation (its outcome: `Completed` with 130 when the command stopped); none when not needed. */
  readonly interrupted: CmdOutputObservation | ErrorObservation | undefined
}

/**
 * `runCommand`, except that a command still running when its time-out ends (soft or hard) is
 * interrupted with `C-c`, so that the next command is not refused. A command that ignores SIGINT
 * can outlive it: `commandOutcome(interrupted)` says so.
 */
export const runCommandKillOnTimeout = Effect.fn("runCommandKillOnTimeout")(function*(
  rt: RuntimeShape,
  command: string | CmdRunAction | ActionFields<typeof CmdRunAction>
) {
  const observation = yield* rt.runCommand(command)
  const running = observation._tag === "CmdOutputObservation" && commandOutcome(observation)._tag === "StillRunning"
  const interrupted = running
    ? yield* rt.runCommand(new CmdRunAction({ command: "C-c", isInput: true }))
    : undefined
  return { observation, interrupted } satisfies KilledOnTimeout
})
