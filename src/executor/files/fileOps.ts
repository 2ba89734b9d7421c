/**
 * FileRead / FileWrite with the semantics of OpenHands' action execution server
 * (`ActionExecutor.read` / `write`), not CLIRuntime's.
 *
 * Deliberate departures from the server:
 * - paths go through `Workspace.resolve` (relative paths against the shell's `cwd`, `/workspace`
 *   mapped onto the real root, the boundary enforced when restricted); a violation is an error;
 * - media files (.png .jpg .jpeg .bmp .gif .pdf .mp4 .webm .ogg) are recognised by the resolved
 *   path *before* the binary check, so an image really comes back as a data URL (the server
 *   checks binariness first, so real PNGs get `ERROR_BINARY_FILE`);
 * - the binary check runs on the resolved path (the server checks the raw path against its own
 *   process directory, which misses relative paths).
 */
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import type { Workspace } from "../workspace.ts"
import { decodeUtf8, isBinaryFile } from "./binary.ts"
import { insertLines, readLines, splitLines } from "./lines.ts"

export type FileResult =
  | { readonly _tag: "Ok"; readonly path: string; readonly content: string }
  | { readonly _tag: "Error"; readonly message: string }

/** The owner given to files FileWrite creates (the session user). */
export interface Owner {
  readonly uid: number
  readonly gid: number
}

export interface ReadArgs {
  readonly path: string
  readonly start: number
  readonly end: number
}

export interface WriteArgs {
  readonly path: string
  readonly content: string
  readonly start: number
  readonly end: number
  readonly owner?: Owner
}

const ok = (path: string, content: string): FileResult => ({ _tag: "Ok", path, content })
const error = (message: string): FileResult => ({ _tag: "Error", message })

/** Data-URL media types; the server takes them from Python's `mimetypes`. */
const MEDIA_TYPES: ReadonlyArray<readonly [extension: string, mime: string]> = [
  [".png", "image/png"],
  [".jpg", "image/jpeg"],
  [".jpeg", "image/jpeg"],
  [".bmp", "image/bmp"],
  [".gif", "image/gif"],
  [".pdf", "application/pdf"],
  [".mp4", "video/mp4"],
  [".webm", "video/webm"],
  [".ogg", "audio/ogg"]
]

const mediaTypeOf = (path: string): string | undefined => {
  const lower = path.toLowerCase()
  return MEDIA_TYPES.find(([extension]) => lower.endsWith(extension))?.[1]
}

/** A failed `node:fs` call, kept as the errno exception so callers can match on `code`. */
const attempt = <A>(run: () => Promise<A>): Effect.Effect<A, NodeJS.ErrnoException> =>
  Effect.tryPromise({ try: run, catch: (cause) => cause as NodeJS.ErrnoException })

const statOrNull = (path: string) => Effect.promise(() => fs.stat(path).catch(() => null))

const readResolved = (path: string, cwd: string, start: number, end: number): Effect.Effect<FileResult> =>
  Effect.gen(function*() {
    const mime = mediaTypeOf(path)
    if (mime === undefined && (yield* isBinaryFile(path))) return error("ERROR_BINARY_FILE")
    const bytes = yield* attempt(() => fs.readFile(path))
    if (mime !== undefined) return ok(path, `data:${mime};base64,${bytes.toString("base64")}`)
    const text = decodeUtf8(bytes)
    if (text === undefined) return error(`File could not be decoded as utf-8: ${path}.`)
    return ok(path, readLines(splitLines(text), start, end).join(""))
  }).pipe(
    Effect.catch((cause) =>
      Effect.succeed(
        cause.code === "ENOENT" || cause.code === "ENOTDIR"
          ? error(`File not found: ${path}. Your current working directory is ${cwd}.`)
          : cause.code === "EISDIR"
          ? error(`Path is a directory: ${path}. You can only read files`)
          : error(cause.message)
      )
    )
  )

/** New files get the server's permissions, and the session user as owner when one is given. */
const setNewFileOwnership = (path: string, owner: Owner | undefined) =>
  attempt(async () => {
    await fs.chmod(path, 0o664)
    if (owner !== undefined) await fs.chown(path, owner.uid, owner.gid)
  }).pipe(
    Effect.match({
      onSuccess: () => ok(path, ""),
      onFailure: (cause) =>
        error(`File ${path} written, but failed to change ownership and permissions: ${cause.message}`)
    })
  )

const writeResolved = (path: string, args: WriteArgs): Effect.Effect<FileResult> =>
  Effect.gen(function*() {
    const newLines = args.content.split("\n").map((line) => `${line}\n`)
    yield* attempt(() => fs.mkdir(nodePath.dirname(path), { recursive: true }))
    const existing = yield* statOrNull(path)
    if (existing?.isDirectory()) return error(`Path is a directory: ${path}. You can only write to files`)
    if (existing === null) {
      yield* attempt(() => fs.writeFile(path, newLines.join(""), { mode: 0o664 }))
      return yield* setNewFileOwnership(path, args.owner)
    }
    const text = decodeUtf8(yield* attempt(() => fs.readFile(path)))
    if (text === undefined) return error(`File could not be decoded as utf-8: ${path}`)
    // Rewriting in place keeps the file's mode and owner, which the server restores explicitly.
    yield* attempt(() => fs.writeFile(path, insertLines(newLines, splitLines(text), args.start, args.end).join("")))
    return ok(path, "")
  }).pipe(
    Effect.catch((cause) =>
      Effect.succeed(cause.code === "ENOENT" ? error(`File not found: ${path}`) : error(cause.message))
    )
  )

/**
 * FileRead: a media file becomes a data URL; a binary file is `ERROR_BINARY_FILE`; text is
 * decoded as strict UTF-8, split into lines as Python's text mode does (line ends kept, CRLF read
 * as LF) and sliced with `read_lines(start, end)`.
 */
export const readFile = (ws: Workspace, cwd: string, args: ReadArgs): Effect.Effect<FileResult> =>
  ws.resolve(args.path, cwd).pipe(
    Effect.flatMap((path) => readResolved(path, cwd, args.start, args.end)),
    Effect.catchTag("WorkspaceViolation", (violation) => Effect.succeed(error(violation.message)))
  )

/**
 * FileWrite: the content is split on `\n` and every piece gets a `\n` (so "abc" is written as
 * "abc\n"); an existing file has the lines [start, end) replaced (the defaults replace it all;
 * its other lines come back with CRLF turned into LF, as the server's text-mode rewrite does), a
 * new one is created with mode 0o664 and, when `owner` is given, chowned. Parent directories are
 * created.
 */
export const writeFile = (ws: Workspace, cwd: string, args: WriteArgs): Effect.Effect<FileResult> =>
  ws.resolve(args.path, cwd).pipe(
    Effect.flatMap((path) => writeResolved(path, args)),
    Effect.catchTag("WorkspaceViolation", (violation) => Effect.succeed(error(violation.message)))
  )
