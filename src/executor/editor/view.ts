/** The `view` command on a file: the whole file, or the lines of `view_range`. */
import { Effect } from "effect"
import { splitLines } from "../files/lines.ts"
import { documentMarkdown } from "./documents.ts"
import { parameterInvalid, ToolError } from "./errors.ts"
import { decodeText } from "./fileText.ts"
import { makeOutput, maybeTruncate } from "./format.ts"
import { listStr, splitlines, suffix } from "./python.ts"
import type { Target } from "./types.ts"
import { isSupportedBinary, readValidFile } from "./validate.ts"

/** `BINARY_FILE_CONTENT_TRUNCATED_NOTICE`. */
const DOCUMENT_TRUNCATED_NOTICE =
  "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. Please use Python libraries to view the entire file or search for specific content within the file.</NOTE>"

/** OHEditor's answer when markitdown cannot convert a file. */
const conversionFailed = (target: Target, reason: string) =>
  new ToolError({
    message: `Error in converting file to Markdown: ${reason}. Please use Python code to read ${target.display}`
  })

/** A document (.pdf, .docx, .pptx, .xlsx) as Markdown, as OHEditor shows it; audio has no converter here. */
const viewDocument = (target: Target, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const convert = documentMarkdown(suffix(target.display).toLowerCase())
    if (convert === null) {
      return yield* conversionFailed(target, "conversion to Markdown is not available in this runtime")
    }
    const markdown = yield* Effect.tryPromise({
      try: () => convert(bytes),
      catch: (cause) => conversionFailed(target, cause instanceof Error ? cause.message : String(cause))
    })
    return `Here's the content of the file ${target.display} displayed in Markdown format:\n${
      maybeTruncate(markdown, DOCUMENT_TRUNCATED_NOTICE)
    }\n`
  })

export const viewFile = (target: Target, viewRange: ReadonlyArray<number> | null): Effect.Effect<string, ToolError> =>
  Effect.gen(function*() {
    const bytes = yield* readValidFile(target)
    if (isSupportedBinary(target)) return yield* viewDocument(target, bytes)
    const { text } = decodeText(bytes)
    // Python's `if not view_range`: an empty list shows the whole file too.
    if (viewRange === null || viewRange.length === 0) return makeOutput(text, target.display)

    const invalid = (hint: string) => parameterInvalid("view_range", listStr(viewRange), hint)
    if (viewRange.length !== 2 || !viewRange.every(Number.isInteger)) {
      return yield* invalid("It should be a list of two integers.")
    }
    const [start, end] = viewRange as readonly [number, number]
    const lines = splitLines(text)
    const numLines = lines.length
    if (start < 1 || start > numLines) {
      return yield* invalid(
        `Its first element \`${start}\` should be within the range of lines of the file: ${listStr([1, numLines])}.`
      )
    }
    const clamped = end > numLines
    const last = end === -1 || clamped ? numLines : end
    if (last < start) {
      return yield* invalid(
        `Its second element \`${end}\` should be greater than or equal to the first element \`${start}\`.`
      )
    }
    const selected = splitlines(lines.slice(start - 1, last).join("")).join("\n")
    const note = clamped
      ? `NOTE: We only show up to ${numLines} since there're only ${numLines} lines in this file.\n`
      : ""
    return note + makeOutput(selected, target.display, start)
  })
