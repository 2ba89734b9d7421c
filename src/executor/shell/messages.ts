/**
 * The exact texts OpenHands' bash session shows an agent (spec §4). Prompts
 * written for OpenHands rely on them, so they are pinned by tests.
 */

/** OpenHands' TIMEOUT_MESSAGE_TEMPLATE, verbatim. */
export const TIMEOUT_MESSAGE_TEMPLATE =
  "You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in execute_bash for future commands."

export const NO_PREVIOUS_COMMAND_LOGS = "ERROR: No previous running command to retrieve logs from."
export const NO_PREVIOUS_COMMAND_INPUT = "ERROR: No previous running command to interact with."
export const PREVIOUS_OUTPUT_PREFIX = "[Below is the output of the previous command.]\n"

/** Python's `repr(float)` for the timeouts OpenHands prints: 1 → "1.0", 2.5 → "2.5". */
export const pythonFloat = (n: number): string => Number.isInteger(n) ? `${n}.0` : String(n)

export const completedSuffix = (exitCode: number, sentKey: string | null): string =>
  sentKey === null
    ? `\n[The command completed with exit code ${exitCode}.]`
    : `\n[The command completed with exit code ${exitCode}. CTRL+${sentKey.slice(-1).toUpperCase()} was sent.]`

export const softTimeoutSuffix = (seconds: number): string =>
  `\n[The command has no new output after ${Math.trunc(seconds)} seconds. ${TIMEOUT_MESSAGE_TEMPLATE}]`

export const hardTimeoutSuffix = (seconds: number): string =>
  `\n[The command timed out after ${pythonFloat(seconds)} seconds. ${TIMEOUT_MESSAGE_TEMPLATE}]`

export const notExecutedSuffix = (command: string): string =>
  `\n[Your command "${command}" is NOT executed. The previous command is still running - You CANNOT send new commands until the previous command is completed. By setting \`is_input\` to \`true\`, you can interact with the current process: ${TIMEOUT_MESSAGE_TEMPLATE}]`

/**
 * Our addition: where the whole output of a truncated command can be read. It goes inside
 * the truncation notice in the content (`truncationNotice`), so `metadata.suffix` stays OpenHands'.
 */
export const fullOutputSavedNote = (length: number, path: string): string =>
  `all ${length} characters are saved in ${path}`

/** Our addition: `exit` (or a crash) ended the shell; the next command runs in a fresh one. */
export const shellExitedSuffix = (exitCode: number): string =>
  `\n[The shell exited with code ${exitCode}; a new shell will run the next command.]`

/** Our addition: forks failed at the session's process limit (a fork bomb, a runaway build); the shell was reset. */
export const processLimitSuffix = (limit: number): string =>
  `\n[The session reached its limit of ${limit} processes, so new processes could not start; every process this shell started was killed and a new shell will run the next command.]`
