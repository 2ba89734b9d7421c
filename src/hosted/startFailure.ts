/**
 * The one text of a server that died at start, whichever provider ran it: the exit code and the
 * last 20 lines it printed, so the cause is read in the error instead of in a provider's console.
 */

/** How many of the server's last lines a start failure carries. */
const TAIL_LINES = 20

/** The last lines of a server's output, trimmed. */
export const outputTail = (output: string): string => output.trim().split("\n").slice(-TAIL_LINES).join("\n")

export const serverExitedMessage = (input: {
  readonly provider: string
  readonly sandboxId: string
  readonly exitCode: number
  readonly output: string
}): string =>
  `The action server in ${input.provider} sandbox ${input.sandboxId} exited with code ${input.exitCode} before it ` +
  `answered. Its last output:\n${outputTail(input.output)}`
