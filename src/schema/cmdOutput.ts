/**
 * Agent-facing limits and texts of command output (spec §3.3, §4.1).
 * Kept apart from the shell so the wire codec can re-apply truncation on decode,
 * as OpenHands' constructor does, without depending on the executor.
 */

/** Longest command output shown to an agent (OpenHands' MAX_CMD_OUTPUT_SIZE). */
export const MAX_CMD_OUTPUT_SIZE = 30_000

/** The 47-character notice placed between the kept head and tail. */
export const TRUNCATION_NOTICE = "\n[... Observation truncated due to length ...]\n"

/** Keep the first and last 15,000 characters. Idempotent: a truncated text is 30,047 characters and stays so. */
export const truncateCmdOutput = (content: string): string => {
  if (content.length <= MAX_CMD_OUTPUT_SIZE) return content
  const half = MAX_CMD_OUTPUT_SIZE / 2
  return content.slice(0, half) + TRUNCATION_NOTICE + content.slice(content.length - half)
}
