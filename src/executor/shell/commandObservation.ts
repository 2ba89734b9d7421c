/**
 * A command's observations as OpenHands shapes them: the text an agent sees of the output since
 * the last observation (secrets masked, truncated with the full output saved to a file), with the
 * metadata of a completion (exit code, working directory) or the suffix of a partial one.
 */
import type { CmdRunAction } from "../../schema/Action.ts"
import { MAX_CMD_OUTPUT_SIZE, truncateCmdOutput, truncationNotice } from "../../schema/cmdOutput.ts"
import { CmdOutputMetadata, CmdOutputObservation } from "../../schema/Observation.ts"
import type { SecretMask } from "../../schema/secrets.ts"
import * as Text from "./messages.ts"
import type { Completion, RunningCommand } from "./runningCommand.ts"
import { collapseCarriageReturns } from "./terminalText.ts"

/** An observation of `action` (its command as sent, trimmed). */
export const observation = (action: CmdRunAction, text: string, metadata: CmdOutputMetadata) =>
  new CmdOutputObservation({ content: text, command: action.command.trim(), metadata, hidden: action.hidden })

/** OpenHands' answer to an empty command or input when nothing runs. */
export const noPrevious = (action: CmdRunAction, text: string) =>
  new CmdOutputObservation({
    content: text,
    command: "",
    metadata: new CmdOutputMetadata({}),
    hidden: action.hidden
  })

/**
 * The segment's text as an agent sees it; a truncated one is saved whole and named in the
 * truncation notice. Secrets are masked before the cut, so none is split by it (the saved
 * file keeps the raw output). A partial observation (the command still runs) keeps back an
 * end that may begin a secret, for the next one: a secret printed across two observations
 * is then masked whole instead of shown in two pieces.
 */
const content = (r: RunningCommand, mask: SecretMask, hidden: boolean, partial = false) => {
  let segment = r.takeSegment().text
  if (partial) {
    const held = mask.unfinished(segment)
    r.output.giveBack(held)
    segment = segment.slice(0, segment.length - held)
  }
  const raw = collapseCarriageReturns(segment).replace(/^\n+/, "").trimEnd()
  const text = mask.text(raw)
  if (hidden || text.length <= MAX_CMD_OUTPUT_SIZE) return text
  const note = Text.fullOutputSavedNote(r.output.length, r.output.saveToFile())
  return truncateCmdOutput(text, truncationNotice(note))
}

/**
 * The observation of a command that ended, before its output is closed. `cwd` is the session's
 * (a shell that exited printed no prompt to say); `key` the control key sent last, if any.
 */
export const completed = (
  r: RunningCommand,
  completion: Completion,
  action: CmdRunAction,
  key: string | null,
  mask: SecretMask,
  cwd: string
) => {
  // An interactive bash's `exit` builtin prints `exit` (or `logout`) as it goes: the terminal's
  // echo of the shell leaving, not the command's output (a sourced script's exit printed none).
  const text = completion._tag === "Exited"
    ? content(r, mask, action.hidden).replace(/(^|\n)(exit|logout)$/, "")
    : content(r, mask, action.hidden)
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

/** The output so far of a command that still runs, with `suffix` saying why it is returned now. */
export const partial = (r: RunningCommand, action: CmdRunAction, suffix: string, mask: SecretMask) => {
  const prefix = r.showPart() ? Text.PREVIOUS_OUTPUT_PREFIX : ""
  return observation(action, content(r, mask, action.hidden, true), new CmdOutputMetadata({ prefix, suffix }))
}
