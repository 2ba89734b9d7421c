/**
 * Reading and writing files as OHEditor does: Python text mode (universal newlines on read,
 * text written verbatim) in the file's detected encoding, failures reported as
 * `Ran into <OSError> while trying to read/write to <path>`.
 */
import { Effect } from "effect"
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import { decodeUtf8 } from "../files/binary.ts"
import { splitLines } from "../files/lines.ts"
import { openForWrite, rewrite } from "../files/safeOpen.ts"
import { ToolError } from "./errors.ts"
import { osErrorStr } from "./python.ts"
import type { Target } from "./types.ts"

/**
 * OHEditor detects each file's encoding with charset_normalizer. Without it we read valid UTF-8
 * as UTF-8 and anything else as Latin-1, which maps every byte to one character, so an edit
 * rewrites the bytes it did not touch unchanged.
 */
export type Encoding = "utf-8" | "latin1"

export interface FileText {
  /** The content with `\r\n` and `\r` read as `\n`, as Python's text mode does. */
  readonly text: string
  readonly encoding: Encoding
}

/** `stat` following symlinks, `null` when the path cannot be stat'ed (Python's `exists()` is false). */
export const statOrNull = (path: string): Effect.Effect<Stats | null> =>
  Effect.promise(() => fs.stat(path).catch(() => null))

/** The text of a file's bytes: valid UTF-8 as UTF-8, anything else as Latin-1; line ends as Python's text mode reads them. */
export const decodeText = (bytes: Uint8Array): FileText => {
  const utf8 = decodeUtf8(bytes)
  const [decoded, encoding]: [string, Encoding] = utf8 === undefined
    ? [Buffer.from(bytes).toString("latin1"), "latin1"]
    : [utf8, "utf-8"]
  return { text: splitLines(decoded).join(""), encoding }
}

/** Python's complaint about a character Latin-1 cannot hold, or `undefined` when all fit. */
const latin1Problem = (text: string): string | undefined => {
  const found = /[^\x00-\xff]/u.exec(text)
  if (found === null) return undefined
  const code = found[0].codePointAt(0)!
  const escape = code > 0xffff ? `\\U${code.toString(16).padStart(8, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
  const position = Array.from(text.slice(0, found.index)).length
  return `'latin-1' codec can't encode character '${escape}' in position ${position}: ordinal not in range(256)`
}

/**
 * Write `text` verbatim to the target in `encoding`, creating the file when missing (its
 * directory must exist), through `safeOpen`: only a regular file, inside the boundary.
 */
export const writeText = (target: Target, text: string, encoding: Encoding): Effect.Effect<void, ToolError> => {
  const failure = (reason: string) =>
    new ToolError({ message: `Ran into ${reason} while trying to write to ${target.display}` })
  const problem = encoding === "latin1" ? latin1Problem(text) : undefined
  if (problem !== undefined) return Effect.fail(failure(problem))
  return openForWrite(target, target.display, { makeParents: false, mode: 0o666 }).pipe(
    Effect.flatMap(({ opened }) => rewrite(opened, Buffer.from(text, encoding))),
    Effect.scoped,
    Effect.catchTags({
      FsFailure: (cause) => Effect.fail(failure(osErrorStr(cause, target.display))),
      UnsafeFile: ({ message }) => Effect.fail(new ToolError({ message }))
    })
  )
}
