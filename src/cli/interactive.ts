/**
 * How a line typed into `effect-sandbox shell` becomes an action: plain text is
 * a command, an empty line asks for more output, `!text` is input to the running
 * process (`!C-c` sends the key).
 */
import { CmdRunAction } from "../schema/Action.ts"

export const interactiveAction = (line: string): CmdRunAction =>
  line.startsWith("!")
    ? new CmdRunAction({ command: line.slice(1), isInput: true })
    : new CmdRunAction({ command: line })
