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
 *   process directory, which misses relative paths);
 * - files are opened through `safeOpen`: only regular files (a device, FIFO or socket is refused
 *   at once), at most 32 MiB read, and in a restricted workspace what is opened is checked, not
 *   just the path (links swapped in after the check and hard-linked files are refused).
 */
import { Effect } from "effect"
import type { Workspace } from "../workspace.ts"
import { decodeUtf8, isBinaryFile } from "./binary.ts"
import { insertLines, readLines, splitLines, writtenLines } from "./lines.ts"
import { type Located, type Opened, openFile, openForWrite, readBounded, rewrite } from "./safeOpen.ts"

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

/**
 * The most FileRead reads, and the largest existing file FileWrite rewrites (OpenHands has no
 * limit): one request must not be able to take the server's memory.
 */
const MAX_READ_BYTES = 32 * 1024 * 1024

const tooLarge = (path: string, size: number) =>
  error(
    `File is too large to read: ${path} (${size} bytes; at most ${MAX_READ_BYTES} bytes are read). Use the shell to read parts of it.`
  )

const readResolved = (located: Located, cwd: string, start: number, end: number): Effect.Effect<FileResult> => {
  const { path } = located
  return Effect.gen(function*() {
    const file = yield* openFile(located, path)
    const mime = mediaTypeOf(path)
    if (mime === undefined && (yield* isBinaryFile(path, file.handle))) return error("ERROR_BINARY_FILE")
    const bytes = yield* readBounded(file, MAX_READ_BYTES)
    if (mime !== undefined) return ok(path, `data:${mime};base64,${bytes.toString("base64")}`)
    const text = decodeUtf8(bytes)
    if (text === undefined) return error(`File could not be decoded as utf-8: ${path}.`)
    return ok(path, readLines(splitLines(text), start, end).join(""))
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      FsFailure: (cause) =>
        Effect.succeed(
          cause.code === "ENOENT" || cause.code === "ENOTDIR"
            ? error(`File not found: ${path}. Your current working directory is ${cwd}.`)
            : cause.code === "EISDIR"
            ? error(`Path is a directory: ${path}. You can only read files`)
            : error(cause.message)
        ),
      FileTooLarge: ({ size }) => Effect.succeed(tooLarge(path, size)),
      UnsafeFile: ({ message }) => Effect.succeed(error(message))
    })
  )
}

/** New files get the server's permissions, and the session user as owner when one is given. */
const setNewFileOwnership = (file: Opened, path: string, owner: Owner | undefined) =>
  Effect.tryPromise({
    try: async () => {
      await file.handle.chmod(0o664)
      if (owner !== undefined) await file.handle.chown(owner.uid, owner.gid)
    },
    catch: (cause) => cause as Error
  }).pipe(
    Effect.match({
      onSuccess: () => ok(path, ""),
      onFailure: (cause) =>
        error(`File ${path} written, but failed to change ownership and permissions: ${cause.message}`)
    })
  )

const writeResolved = (located: Located, args: WriteArgs): Effect.Effect<FileResult> => {
  const { path } = located
  return Effect.gen(function*() {
    const newLines = writtenLines(args.content)
    const { created, opened } = yield* openForWrite(located, path, { makeParents: true, mode: 0o664 })
    if (created) {
      yield* rewrite(opened, Buffer.from(newLines.join("")))
      return yield* setNewFileOwnership(opened, path, args.owner)
    }
    const text = decodeUtf8(yield* readBounded(opened, MAX_READ_BYTES))
    if (text === undefined) return error(`File could not be decoded as utf-8: ${path}`)
    // Rewriting in place keeps the file's mode and owner, which the server restores explicitly.
    yield* rewrite(opened, Buffer.from(insertLines(newLines, splitLines(text), args.start, args.end).join("")))
    return ok(path, "")
  }).pipe(
    Effect.scoped,
    Effect.catchTags({
      FsFailure: (cause) =>
        Effect.succeed(
          cause.code === "ENOENT"
            ? error(`File not found: ${path}`)
            : cause.code === "EISDIR"
            ? error(`Path is a directory: ${path}. You can only write to files`)
            : error(cause.message)
        ),
      FileTooLarge: ({ size }) => Effect.succeed(tooLarge(path, size)),
      UnsafeFile: ({ message }) => Effect.succeed(error(message))
    })
  )
}

/**
 * FileRead: a media file becomes a data URL; a binary file is `ERROR_BINARY_FILE`; text is
 * decoded as strict UTF-8, split into lines as Python's text mode does (line ends kept, CRLF read
 * as LF) and sliced with `read_lines(start, end)`.
 */
export const readFile = (ws: Workspace, cwd: string, args: ReadArgs): Effect.Effect<FileResult> =>
  ws.locate(args.path, cwd).pipe(
    Effect.flatMap((located) => readResolved(located, cwd, args.start, args.end)),
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
  ws.locate(args.path, cwd).pipe(
    Effect.flatMap((located) => writeResolved(located, args)),
    Effect.catchTag("WorkspaceViolation", (violation) => Effect.succeed(error(violation.message)))
  )
