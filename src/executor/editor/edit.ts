/** The commands that change a file: `create`, `str_replace`, `insert` and `undo_edit`. */
import { Effect } from "effect"
import { splitLines } from "../files/lines.ts"
import { parameterInvalid, ToolError } from "./errors.ts"
import { decodeText, writeText } from "./fileText.ts"
import { makeOutput } from "./format.ts"
import type { EditHistory } from "./history.ts"
import { listStr, strip } from "./python.ts"
import type { EditorResult, Target } from "./types.ts"
import { readValidFile } from "./validate.ts"

/** `SNIPPET_CONTEXT_WINDOW`: lines shown around an edit. */
const SNIPPET_CONTEXT_WINDOW = 4

const edited = (output: string, oldFile: string | null, newFile: string): EditorResult => ({
  output,
  isError: false,
  oldFile,
  newFile
})

/**
 * Writes `fileText` (the parent directory must exist) and, as OHEditor does, records the new
 * text as history, so an `undo_edit` right after rewrites the same text instead of deleting the file.
 */
export const create = (
  target: Target,
  fileText: string,
  history: EditHistory
): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    yield* writeText(target, fileText, "utf-8")
    history.add(target.path, fileText)
    return edited(`File created successfully at: ${target.display}`, null, fileText)
  })

/** Start offsets of the non-overlapping occurrences, as `re.finditer(re.escape(needle))` finds them. */
const occurrences = (text: string, needle: string): Array<number> => {
  if (needle === "") return Array.from({ length: text.length + 1 }, (_, offset) => offset)
  const found: Array<number> = []
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) found.push(at)
  return found
}

/** The 1-based line of each offset (offsets ascending). */
const lineNumbers = (text: string, offsets: ReadonlyArray<number>): Array<number> => {
  let line = 1
  let scanned = 0
  return offsets.map((offset) => {
    for (; scanned < offset; scanned++) if (text.charCodeAt(scanned) === 10) line++
    return line
  })
}

const countNewlines = (text: string): number => text.split("\n").length - 1

/** The new file's lines `start+1 .. end` (1-based), each with its newline. */
const snippetOf = (text: string, start: number, end: number): string => splitLines(text).slice(start, end).join("")

/**
 * Replaces the single literal occurrence of `oldStr`. When there is none, both strings are
 * stripped of surrounding whitespace and the search is retried (so messages show the stripped
 * `old_str`). The snippet spans 4 lines before the match to 4 after the replacement.
 */
export const strReplace = (
  target: Target,
  oldStr: string,
  newStr: string | null,
  history: EditHistory
): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    const path = target.display
    const file = decodeText(yield* readValidFile(target))
    const search = (needle: string, replacement: string) => ({
      needle,
      replacement,
      found: occurrences(file.text, needle)
    })
    const exact = search(oldStr, newStr ?? "")
    const { found, needle, replacement } = exact.found.length > 0 ? exact : search(strip(oldStr), strip(newStr ?? ""))
    if (found.length === 0) {
      return yield* new ToolError({
        message: `No replacement was performed, old_str \`${needle}\` did not appear verbatim in ${path}.`
      })
    }
    const lines = lineNumbers(file.text, found)
    if (found.length > 1) {
      const unique = lines.filter((line, i) => line !== lines[i - 1])
      return yield* new ToolError({
        message: `No replacement was performed. Multiple occurrences of old_str \`${needle}\` in lines ${
          listStr(unique)
        }. Please ensure it is unique.`
      })
    }
    const at = found[0]
    const newText = file.text.slice(0, at) + replacement + file.text.slice(at + needle.length)
    yield* writeText(target, newText, file.encoding)
    history.add(target.path, file.text)
    const start = Math.max(0, lines[0] - SNIPPET_CONTEXT_WINDOW)
    const end = lines[0] + SNIPPET_CONTEXT_WINDOW + countNewlines(replacement)
    return edited(
      `The file ${path} has been edited. ` +
        makeOutput(snippetOf(newText, start, end), `a snippet of ${path}`, start + 1) +
        "Review the changes and make sure they are as expected. Edit the file again if necessary.",
      file.text,
      newText
    )
  })

/**
 * Inserts the lines of `newStr`, each followed by `\n`, after line `insertLine` (0: at the top).
 * Kept quirk: a file without a final newline gets the text glued to its last line when inserting
 * after it (`a\nb` + `X` at 2 → `a\nbX\n`). The file is rewritten in place, so it keeps its mode
 * (OHEditor's temp-file-and-move leaves it 0600).
 */
export const insert = (
  target: Target,
  insertLine: number,
  newStr: string,
  history: EditHistory
): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    const path = target.display
    const file = decodeText(yield* readValidFile(target))
    const lines = splitLines(file.text)
    if (insertLine < 0 || insertLine > lines.length) {
      return yield* parameterInvalid(
        "insert_line",
        String(insertLine),
        `It should be within the range of allowed values: ${listStr([0, lines.length])}`
      )
    }
    const inserted = newStr.split("\n").map((line) => `${line}\n`)
    const newText = [...lines.slice(0, insertLine), ...inserted, ...lines.slice(insertLine)].join("")
    yield* writeText(target, newText, file.encoding)
    history.add(target.path, file.text)
    const start = Math.max(0, insertLine - SNIPPET_CONTEXT_WINDOW)
    const end = Math.min(lines.length + inserted.length, insertLine + SNIPPET_CONTEXT_WINDOW + inserted.length)
    return edited(
      `The file ${path} has been edited. ` +
        makeOutput(snippetOf(newText, start, end), "a snippet of the edited file", start + 1) +
        "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
      file.text,
      // OHEditor re-reads the file, so a `\r` in `newStr` comes back as a line break.
      splitLines(newText).join("")
    )
  })

/** Restores the most recent history entry and shows the whole restored file. */
export const undoEdit = (target: Target, history: EditHistory): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    const path = target.display
    const current = decodeText(yield* readValidFile(target))
    const previous = history.pop(target.path)
    if (previous === undefined) return yield* new ToolError({ message: `No edit history found for ${path}.` })
    yield* writeText(target, previous, current.encoding)
    return edited(`Last edit to ${path} undone successfully. ${makeOutput(previous, path)}`, current.text, previous)
  })
