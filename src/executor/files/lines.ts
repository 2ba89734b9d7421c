/**
 * Line helpers of OpenHands' file actions (`openhands/runtime/utils/files.py`) and of Python's
 * text-mode reading, which both the server's read/write and the editor go through.
 */

/**
 * Python's `readlines()` on a file opened in text mode (universal newlines): `\r\n` and `\r` are
 * read as `\n`, and every line keeps its `\n`. This is why the OpenHands server and editor turn
 * CRLF files into LF files when they rewrite them.
 */
export const splitLines = (text: string): Array<string> => {
  const pieces = text.replace(/\r\n?/g, "\n").split("\n")
  const last = pieces.pop() ?? ""
  const lines = pieces.map((line) => line + "\n")
  if (last !== "") lines.push(last)
  return lines
}

/**
 * The lines `FileWriteAction` writes for `content`: every line, the last one too, ends with `\n`
 * (OpenHands' server writes `line + "\n"` for each; prompts and tests rely on it), so `"a"` is
 * written as `"a\n"` and `"a\n"` as `"a\n\n"`.
 */
export const writtenLines = (content: string): Array<string> => content.split("\n").map((line) => `${line}\n`)

/**
 * `read_lines(all_lines, start, end)` with 0-based bounds: `end == -1` reads to the end;
 * otherwise both are clamped to the file and at least one line is returned, the start being
 * pulled back to the second-to-last line (e.g. (4, 5) on 5 lines gives the last two).
 */
export const readLines = (all: ReadonlyArray<string>, start: number, end: number): Array<string> => {
  const count = all.length
  const from = Math.min(Math.max(start, 0), count)
  if (end === -1) return all.slice(from)
  const to = Math.min(Math.max(end, 0), count)
  const begin = Math.max(0, Math.min(from, count - 2))
  return all.slice(begin, Math.max(begin + 1, to))
}

/**
 * `insert_lines(to_insert, original, start, end)`: the lines before `start`, the new lines, then
 * the lines from `end` on (`end == -1`: none). Python pads both ends with `''` when `start == 0`
 * or `end == -1`; the padding vanishes once the lines are joined, so it is left out here.
 */
export const insertLines = (
  newLines: ReadonlyArray<string>,
  oldLines: ReadonlyArray<string>,
  start: number,
  end: number
): Array<string> => [...oldLines.slice(0, start), ...newLines, ...(end === -1 ? [] : oldLines.slice(end))]
