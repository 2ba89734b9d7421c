/** The `view` command on a file: the whole file, or the lines of `view_range`. */
import { Effect } from "effect"
import { splitLines } from "../files/lines.ts"
import { parameterInvalid, ToolError } from "./errors.ts"
import { decodeText } from "./fileText.ts"
import { makeOutput } from "./format.ts"
import { listStr, splitlines } from "./python.ts"
import type { Target } from "./types.ts"
import { isSupportedBinary, readValidFile } from "./validate.ts"

/**
 * OHEditor converts these to Markdown with markitdown; this runtime has no converter, so viewing
 * one fails the way a failed conversion does.
 */
const markdownUnavailable = (target: Target) =>
  new ToolError({
    message:
      `Error in converting file to Markdown: conversion to Markdown is not available in this runtime. Please use Python code to read ${target.display}`
  })

export const viewFile = (target: Target, viewRange: ReadonlyArray<number> | null): Effect.Effect<string, ToolError> =>
  Effect.gen(function*() {
    const bytes = yield* readValidFile(target)
    if (isSupportedBinary(target)) return yield* markdownUnavailable(target)
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
