/**
 * What a hosted runtime says when its action server exits before it answered `/alive`: one text
 * for every provider, so a user reads the same start failure whichever cloud ran the sandbox, and
 * its tests pin it in one place rather than in every driver.
 */

/** How many of the server's last output lines the message carries: enough for a stack trace's end. */
const SERVER_OUTPUT_TAIL_LINES = 20

export interface ServerExitedInput {
  /** The provider as the text names it: `E2B`, `Modal`, `Runloop`, `Daytona`. */
  readonly provider: string
  /** The provider's word for a sandbox (`devbox` on Runloop); default `sandbox`. */
  readonly sandboxNoun?: string
  /** The provider's id of the sandbox the server ran in. */
  readonly sandboxId: string
  /** The server's exit code (-1 when the provider could not tell). */
  readonly exitCode: number
  /** Everything the server printed, stdout then stderr, as the provider gave it. */
  readonly output: string
}

/**
 * `output` without the blank space around it, cut to its last SERVER_OUTPUT_TAIL_LINES lines (a
 * server that crashed at import prints a long traceback whose end says why).
 */
const outputTail = (output: string): string => output.trim().split("\n").slice(-SERVER_OUTPUT_TAIL_LINES).join("\n")

/**
 * The start failure's message: `The action server in E2B sandbox <id> exited with code <n> before
 * it answered. Its last output:\n<the last 20 lines>`, as E2BRuntime and the Runloop driver write it.
 */
export const serverExitedMessage = (input: ServerExitedInput): string =>
  `The action server in ${input.provider} ${input.sandboxNoun ?? "sandbox"} ${input.sandboxId} exited with code ` +
  `${input.exitCode} before it answered. Its last output:\n${outputTail(input.output)}`
