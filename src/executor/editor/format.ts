/**
 * How OHEditor shows text to the agent: the 16,000-character cap with its notices and the
 * `cat -n` style numbering.
 */

/** `MAX_RESPONSE_LEN_CHAR`. */
const MAX_RESPONSE_LEN_CHAR = 16_000

const TEXT_FILE_TRUNCATED_NOTICE =
  "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"

export const DIRECTORY_TRUNCATED_NOTICE =
  "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>"

/**
 * `maybe_truncate`: the first 16,000 characters plus the notice. Python counts code points, so
 * a surrogate pair counts once and is never cut in half.
 */
export const maybeTruncate = (content: string, notice: string): string => {
  if (content.length <= MAX_RESPONSE_LEN_CHAR) return content
  let units = 0
  for (let points = 0; points < MAX_RESPONSE_LEN_CHAR && units < content.length; points++) {
    units += content.codePointAt(units)! > 0xffff ? 2 : 1
  }
  return units < content.length ? content.slice(0, units) + notice : content
}

/**
 * `_make_output`: truncate the raw text, then prefix every line (split on `\n`, so text ending
 * in `\n` shows a last, empty line) with its number right-aligned in 6 columns and a TAB.
 */
export const makeOutput = (content: string, description: string, startLine = 1): string => {
  const numbered = maybeTruncate(content, TEXT_FILE_TRUNCATED_NOTICE)
    .split("\n")
    .map((line, index) => `${String(index + startLine).padStart(6)}\t${line}`)
    .join("\n")
  return `Here's the result of running \`cat -n\` on ${description}:\n${numbered}\n`
}
