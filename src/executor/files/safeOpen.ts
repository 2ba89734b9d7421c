/**
 * How file actions (FileRead, FileWrite, the editor) open what an agent names, so that one request
 * can neither hang the server, nor exhaust its memory, nor step out of a restricted workspace.
 *
 * - Only regular files and directories are acted on. A device, FIFO or socket is refused with a
 *   clear message: reading `/dev/zero` never ends, and opening a FIFO blocks a libuv thread until a
 *   writer comes (four such reads wedge every file action of the session). Files are opened with
 *   `O_NONBLOCK`, so opening never waits, and the type that counts is the one `fstat` gives for the
 *   opened descriptor. A cheap `stat` first refuses special files without opening them at all
 *   (opening some devices has side effects).
 * - Reads stop after a cap, counted in bytes actually read: `stat` sizes lie for devices and for
 *   files that grow.
 * - With a boundary (a restricted workspace) there is no gap between the check and the use: the
 *   resolved path is opened with `O_NOFOLLOW` (a final component swapped for a symlink fails with
 *   ELOOP), and the real path of the *opened* descriptor (`/proc/self/fd/N`) must lie inside the
 *   allowed directories, so swapping a directory of the path for a link does not help either. The
 *   action then uses that descriptor only. Files are created through their parent directory's
 *   descriptor (`/proc/self/fd/<dir>/<name>`, `O_NOFOLLOW`), which was checked the same way. A
 *   regular file with more than one hard link is refused: a link carries no direction, the other
 *   name may be outside the workspace, and nothing on the opened file tells where.
 *
 * Linux only: it relies on `/proc/self/fd`.
 */
import { Data, Effect, type Scope } from "effect"
import { constants, type Dirent, type Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"

/** Where opened files must lie: a restricted workspace's allowed directories. */
export interface Boundary {
  /** Real paths of the directories (and everything beneath them). */
  readonly allowed: ReadonlyArray<string>
  /** The refusal an agent reads when what was opened turns out to be at `real`, outside. */
  readonly outside: (real: string) => string
}

/** A resolved path and, when restricted, the boundary that what is opened there must respect. */
export interface Located {
  readonly path: string
  readonly boundary: Boundary | undefined
}

/** A file action refused for safety; `message` is what the agent reads. */
export class UnsafeFile extends Data.TaggedError("UnsafeFile")<{ readonly message: string }> {}

/** The operating system refused (ENOENT, EACCES, EISDIR...); callers word it as OpenHands does. */
export class FsFailure extends Data.TaggedError("FsFailure")<{
  readonly code: string | undefined
  readonly message: string
}> {}

/** More than the cap was read; `size` is what is known of the size (at least the cap plus one). */
export class FileTooLarge extends Data.TaggedError("FileTooLarge")<{ readonly size: number }> {}

/** An open file or directory, closed with its scope. */
export interface Opened {
  readonly handle: fs.FileHandle
  readonly stats: Stats
  /** `/proc/self/fd/N`: names below it are looked up in the opened directory itself. */
  readonly fdPath: string
}

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR } = constants

/** True when `path` is `dir` or lies beneath it, comparing whole segments. */
export const isWithin = (path: string, dir: string): boolean =>
  path === dir || path.startsWith(dir.endsWith(nodePath.sep) ? dir : dir + nodePath.sep)

const inside = (boundary: Boundary, real: string): boolean => boundary.allowed.some((dir) => isWithin(real, dir))

const failure = (cause: unknown): FsFailure => {
  const { code, message } = cause as NodeJS.ErrnoException
  return new FsFailure({ code, message })
}

const attempt = <A>(run: () => Promise<A>): Effect.Effect<A, FsFailure> =>
  Effect.tryPromise({ try: run, catch: failure })

/** What a file that is neither regular nor a directory is, for the refusal. */
const kindOf = (stats: Stats): string =>
  stats.isCharacterDevice()
    ? "a character device"
    : stats.isBlockDevice()
    ? "a block device"
    : stats.isFIFO()
    ? "a FIFO (named pipe)"
    : stats.isSocket()
    ? "a socket"
    : stats.isSymbolicLink()
    ? "a symbolic link"
    : "not a regular file"

/** Refuses anything but a regular file or a directory, naming the file `display`. */
const refuseSpecial = (stats: Stats, display: string): Effect.Effect<void, UnsafeFile> =>
  stats.isFile() || stats.isDirectory()
    ? Effect.void
    : Effect.fail(
      new UnsafeFile({
        message: `Cannot act on ${display}: it is ${
          kindOf(stats)
        }. File actions only work on regular files and directories.`
      })
    )

/** `lstat` (restricted: links are not followed) or `stat`; `undefined` when there is nothing to stat. */
const statIfAny = (path: string, boundary: Boundary | undefined) =>
  Effect.promise(() => (boundary === undefined ? fs.stat(path) : fs.lstat(path)).catch(() => undefined))

/** Opens `path` for the scope's lifetime. */
const openScoped = (path: string, flags: number, mode?: number): Effect.Effect<fs.FileHandle, FsFailure, Scope.Scope> =>
  Effect.acquireRelease(
    attempt(() => fs.open(path, flags | O_NONBLOCK, mode)),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  )

/**
 * The checks on an opened descriptor: its type, and within a boundary its link count and its real
 * location. `display` names it in refusals.
 */
const inspect = Effect.fn("safeOpen.inspect")(function*(
  handle: fs.FileHandle,
  display: string,
  boundary: Boundary | undefined
) {
  const stats = yield* attempt(() => handle.stat())
  yield* refuseSpecial(stats, display)
  const fdPath = `/proc/self/fd/${handle.fd}`
  if (boundary !== undefined) {
    if (stats.isFile() && stats.nlink > 1) {
      return yield* new UnsafeFile({
        message:
          `Cannot act on ${display}: it has ${stats.nlink} hard links. In a restricted workspace files with more than one link are refused, because another link may be outside the workspace.`
      })
    }
    const real = yield* attempt(() => fs.readlink(fdPath))
    if (!inside(boundary, real)) {
      return yield* new UnsafeFile({ message: boundary.outside(real) })
    }
  }
  return { handle, stats, fdPath } satisfies Opened
})

/** Links are not followed when a boundary applies: the path given was resolved already. */
const noFollow = (boundary: Boundary | undefined): number => boundary === undefined ? 0 : O_NOFOLLOW

/** What `open(2)` answers for a directory where a file was wanted (Python's `open()` on a directory too). */
const isDirectory = () => new FsFailure({ code: "EISDIR", message: "EISDIR: illegal operation on a directory, open" })

/**
 * Opens an existing regular file for reading (a directory fails with EISDIR). `display` names it
 * in refusals; a special file is refused before it is opened when `stat` already shows it.
 */
export const openFile = Effect.fn("safeOpen.openFile")(function*(located: Located, display: string) {
  const before = yield* statIfAny(located.path, located.boundary)
  if (before !== undefined) yield* refuseSpecial(before, display)
  const handle = yield* openScoped(located.path, O_RDONLY | noFollow(located.boundary))
  const opened = yield* inspect(handle, display, located.boundary)
  if (opened.stats.isDirectory()) return yield* isDirectory()
  return opened
})

/** Opens an existing directory (ENOTDIR for anything else). */
export const openDirectory = (located: Located, display: string) =>
  Effect.flatMap(
    openScoped(located.path, O_RDONLY | O_DIRECTORY | noFollow(located.boundary)),
    (handle) => inspect(handle, display, located.boundary)
  )

/**
 * Opens the directory `name` inside the opened directory `parent`, following a symlink (as
 * `find -L` does); within a boundary, a target outside it is refused.
 */
export const openDirectoryAt = (parent: Opened, name: string, display: string, boundary: Boundary | undefined) =>
  Effect.flatMap(
    openScoped(`${parent.fdPath}/${name}`, O_RDONLY | O_DIRECTORY),
    (handle) => inspect(handle, display, boundary)
  )

/** The entries of an opened directory, with their types as the directory records them (links not followed). */
export const readEntries = (dir: Opened): Effect.Effect<Array<Dirent>, FsFailure> =>
  attempt(() => fs.readdir(dir.fdPath, { withFileTypes: true }))

/**
 * Whether the entry `name` of the opened directory `parent` leads to a directory once symlinks are
 * followed, and, within a boundary, stays inside it (a link out is then not a directory to descend
 * into, only a name).
 */
export const leadsToDirectory = (parent: Opened, name: string, boundary: Boundary | undefined) =>
  Effect.promise(async () => {
    const path = `${parent.fdPath}/${name}`
    const stats = await fs.stat(path).catch(() => undefined)
    if (stats?.isDirectory() !== true) return false
    if (boundary === undefined) return true
    const real = await fs.realpath(path).catch(() => undefined)
    return real !== undefined && inside(boundary, real)
  })

/**
 * Opens the directory that will hold `located.path`; with `makeParents`, missing directories are
 * created. Within a boundary each one is created and opened through its parent's descriptor without
 * following links, so every directory on the way is one that was checked.
 */
const openParent = (
  located: Located,
  display: string,
  makeParents: boolean
): Effect.Effect<Opened, UnsafeFile | FsFailure, Scope.Scope> => {
  const dir = nodePath.dirname(located.path)
  const parent = { path: dir, boundary: located.boundary }
  if (located.boundary === undefined) {
    return Effect.andThen(
      makeParents ? attempt(() => fs.mkdir(dir, { recursive: true })).pipe(Effect.asVoid) : Effect.void,
      openDirectory(parent, display)
    )
  }
  return openDirectory(parent, display).pipe(
    Effect.catchIf(
      (error) => makeParents && error._tag === "FsFailure" && error.code === "ENOENT" && dir !== located.path,
      () =>
        Effect.gen(function*() {
          const grandparent = yield* openParent(parent, display, makeParents)
          const name = nodePath.basename(dir)
          yield* attempt(() => fs.mkdir(`${grandparent.fdPath}/${name}`)).pipe(
            Effect.catchIf((error) => error.code === "EEXIST", () => Effect.void)
          )
          const handle = yield* openScoped(`${grandparent.fdPath}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
          return yield* inspect(handle, display, located.boundary)
        })
    )
  )
}

export interface WriteOptions {
  /** Create missing parent directories. */
  readonly makeParents: boolean
  /** Permission bits of a new file (before the umask). */
  readonly mode: number
}

/**
 * Opens a regular file for reading and writing, creating it when missing; `created` tells which.
 * A directory fails with EISDIR. Nothing is truncated here: the caller rewrites through the
 * descriptor once the file has passed the checks.
 */
export const openForWrite = Effect.fn("safeOpen.openForWrite")(function*(
  located: Located,
  display: string,
  options: WriteOptions
) {
  const { boundary } = located
  // Answered before the parent is opened: the workspace root itself is a directory, not a file
  // to create in the directory above it (which would lie outside).
  const before = yield* statIfAny(located.path, boundary)
  if (before !== undefined) yield* refuseSpecial(before, display)
  if (before?.isDirectory() === true) return yield* isDirectory()
  const parent = yield* openParent(located, display, options.makeParents)
  const path = `${parent.fdPath}/${nodePath.basename(located.path)}`
  const fresh = yield* openScoped(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, options.mode).pipe(
    Effect.map((handle) => ({ handle, created: true })),
    Effect.catchIf((error) => error.code === "EEXIST", () => Effect.succeed(undefined))
  )
  // Unrestricted, a dangling link is written through (its target created), as `open(path, "w")` does.
  const existingFlags = O_RDWR | (boundary === undefined ? O_CREAT : O_NOFOLLOW)
  const { created, handle } = fresh ??
    { handle: yield* openScoped(path, existingFlags, options.mode), created: false }
  const opened = yield* inspect(handle, display, boundary)
  if (opened.stats.isDirectory()) return yield* isDirectory()
  return { opened, created }
})

/** Reads from position 0 until the end or until `limit` bytes, whichever comes first. */
const readUpTo = async (handle: fs.FileHandle, limit: number, sizeHint: number): Promise<Buffer> => {
  let buffer = Buffer.allocUnsafe(Math.min(limit, Math.max(sizeHint, 64 * 1024)))
  let length = 0
  while (length < limit) {
    if (length === buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2))
      buffer.copy(grown, 0, 0, length)
      buffer = grown
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
    if (bytesRead === 0) break
    length += bytesRead
  }
  return buffer.subarray(0, length)
}

/**
 * The whole file, read through its descriptor; more than `cap` bytes (by `fstat`, or actually
 * read: at most `cap + 1` are) fail with `FileTooLarge`.
 */
export const readBounded = Effect.fn("safeOpen.readBounded")(function*(file: Opened, cap: number) {
  if (file.stats.size > cap) return yield* new FileTooLarge({ size: file.stats.size })
  const bytes = yield* attempt(() => readUpTo(file.handle, cap + 1, file.stats.size + 1))
  if (bytes.length > cap) return yield* new FileTooLarge({ size: bytes.length })
  return bytes
})

/** Replaces the file's content with `data`, through its descriptor. */
export const rewrite = (file: Opened, data: Uint8Array): Effect.Effect<void, FsFailure> =>
  attempt(async () => {
    await file.handle.truncate(0)
    for (let written = 0; written < data.length;) {
      const { bytesWritten } = await file.handle.write(data, written, data.length - written, written)
      written += bytesWritten
    }
  })
