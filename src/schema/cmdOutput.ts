/**
 * Agent-facing limits and texts of command output (spec §3.3, §4.1).
 * Kept apart from the shell so the wire codec can re-apply truncation on decode,
 * as OpenHands' constructor does, without depending on the executor.
 */

/** Longest command output shown to an agent (OpenHands' MAX_CMD_OUTPUT_SIZE). */
export const MAX_CMD_OUTPUT_SIZE = 30_000

/** The 47-character notice placed between the kept head and tail. */
export const TRUNCATION_NOTICE = "\n[... Observation truncated due to length ...]\n"

const NOTICE_START = "\n[... Observation truncated due to length"
const NOTICE_END = " ...]\n"

/**
 * Longest notice a truncated text may carry and still count as truncated: OpenHands' own,
 * or ours with a note (a file path) in it. Bounded, so no output passes uncut by faking one.
 */
const MAX_NOTICE_LENGTH = 1024

/**
 * OpenHands' notice with `note` inside it (`...due to length; <note> ...`): the agent reads
 * the note where the output was cut, and a client that re-truncates, ours or OpenHands',
 * cuts exactly that notice out and puts its own in.
 */
export const truncationNotice = (note: string): string => `${NOTICE_START}; ${note}${NOTICE_END}`

/** Finds the notices `truncateCmdOutput` puts in, with or without a note. */
export const TRUNCATION_NOTICE_PATTERN = /\n\[\.\.\. Observation truncated due to length(?:; [^\n]*)? \.\.\.\]\n/

const half = MAX_CMD_OUTPUT_SIZE / 2

/** Already cut here: 15,000 characters, a notice, 15,000 characters. */
const isTruncated = (content: string): boolean =>
  content.length <= MAX_CMD_OUTPUT_SIZE + MAX_NOTICE_LENGTH
  && content.startsWith(NOTICE_START, half)
  && content.endsWith(NOTICE_END, content.length - half)

/**
 * Keep the first and last 15,000 characters with `notice` between them. Idempotent: a
 * truncated text (30,047 characters, more with a note) stays as it is.
 */
export const truncateCmdOutput = (content: string, notice: string = TRUNCATION_NOTICE): string => {
  if (content.length <= MAX_CMD_OUTPUT_SIZE || isTruncated(content)) return content
  return content.slice(0, half) + notice + content.slice(content.length - half)
}
