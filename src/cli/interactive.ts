/**
 * How what is typed into `effect-sandbox shell` becomes actions. A line at the
 * prompt is a command; while it runs, Ctrl-C is the `C-c` key and a typed line
 * is input to it, as in a local terminal.
 *
 * Actions of a session run one at a time, so a key cannot overtake a running
 * action: a running command is followed in short steps (`POLL_SECONDS`, a hard
 * timeout that leaves the command running) and what was typed meanwhile is sent
 * between two steps. Interrupting a step instead would stop the command outright
 * (Ctrl-C, then SIGKILL after a second), which a program that handles Ctrl-C
 * itself (a REPL) must not get.
 */
import { Option } from "effect"
import { CmdRunAction } from "../schema/Action.ts"
import { CmdOutputObservation, type Observation } from "../schema/Observation.ts"

/** How long one step follows a running command before the shell looks for a key or a line to send. */
const POLL_SECONDS = 0.5

/** What the user did at the terminal. */
export type TerminalInput =
  | { readonly _tag: "Line"; readonly line: string }
  | { readonly _tag: "Interrupt" }
  | { readonly _tag: "End" }

/** One step: blocking (no soft timeout) and at most `POLL_SECONDS` long. */
const step = (command: string, isInput: boolean) =>
  new CmdRunAction({ command, isInput, blocking: true, timeout: POLL_SECONDS })

/** The command for a line typed at the prompt; none for a blank line. */
export const commandAction = (line: string): Option.Option<CmdRunAction> =>
  line.trim() === "" ? Option.none() : Option.some(step(line, false))

/** The next step while a command runs: what the user typed meanwhile, else a wait for more output ("end": Ctrl-D). */
export const nextStep = (input: Option.Option<TerminalInput>): CmdRunAction | "end" => {
  if (Option.isNone(input)) return step("", false)
  switch (input.value._tag) {
    case "Interrupt":
      return step("C-c", true)
    case "Line":
      return step(input.value.line, true)
    case "End":
      return "end"
  }
}

/** The command is still running after a step (a step that timed out has no exit code yet). */
export const stillRunning = (observation: Observation): boolean =>
  observation instanceof CmdOutputObservation && observation.exitCode === -1
