/**
 * `view` on a directory. OHEditor shells out to `find -L <p> -maxdepth 2` minus hidden entries
 * at depths 1 and 2 (`-path '<p>/.*'`, `-path '<p>/<any>/.*'`), piped through `sort`, plus a
 * second `find` counting the hidden entries of `<p>`. This walk reproduces that output without a
 * shell, which also makes paths with spaces or quotes work (interpolated unquoted, they break the
 * Python editor). Directories are read through descriptors (`safeOpen`); in a restricted
 * workspace a symlink leading out of it is listed as a name, never followed.
 */
import { Effect } from "effect"
import type { Dirent } from "node:fs"
import {
  type Boundary,
  type FsFailure,
  leadsToDirectory,
  openDirectory,
  openDirectoryAt,
  type Opened,
  readEntries,
  type UnsafeFile
} from "../files/safeOpen.ts"
import { ToolError } from "./errors.ts"
import { DIRECTORY_TRUNCATED_NOTICE, maybeTruncate } from "./format.ts"
import { strip } from "./python.ts"
import type { Target } from "./types.ts"

interface Entry {
  /** The path as `find` prints it: the agent's directory path joined with the names below it. */
  readonly shown: string
  /** Its name in its parent directory. */
  readonly name: string
  readonly isDirectory: boolean
}

/** How many directories are read at once. */
const CONCURRENCY = 16

const isHidden = (name: string): boolean => name.startsWith(".")

/** `find` reports an unreadable directory on stderr, which the editor turns into an error. */
const findError = (shown: string) => (error: FsFailure | UnsafeFile): ToolError =>
  error._tag === "UnsafeFile"
    ? new ToolError({ message: error.message })
    : new ToolError({
      message: `find: ‘${shown}’: ${error.code === "EACCES" ? "Permission denied" : error.message}\n`
    })

/**
 * An entry of the opened directory `parent` (shown as `parentShown`). `find -L` follows symlinks,
 * so a link to a directory is a directory; within a boundary only when it stays inside, so a link
 * out of the workspace is listed as a name and never descended into.
 */
const child = (parent: Opened, parentShown: string, dirent: Dirent, boundary: Boundary | undefined) => {
  const shown = parentShown.endsWith("/") ? parentShown + dirent.name : `${parentShown}/${dirent.name}`
  const directory = dirent.isSymbolicLink()
    ? leadsToDirectory(parent, dirent.name, boundary)
    : Effect.succeed(dirent.isDirectory())
  return Effect.map(directory, (isDirectory): Entry => ({ shown, name: dirent.name, isDirectory }))
}

/** The visible entries of the opened directory `dir`, shown below `shown`. */
const visibleChildren = (dir: Opened, shown: string, boundary: Boundary | undefined) =>
  Effect.flatMap(
    Effect.mapError(readEntries(dir), findError(shown)),
    (dirents) =>
      Effect.map(
        Effect.forEach(dirents.filter((dirent) => !isHidden(dirent.name)), (dirent) =>
          child(dir, shown, dirent, boundary)),
        (children) => ({ dirents, children })
      )
  )

/** The order of `sort` under the runtime's `C.UTF-8` locale: by UTF-8 bytes. */
const byBytes = (a: Entry, b: Entry): number => Buffer.compare(Buffer.from(a.shown), Buffer.from(b.shown))

/**
 * The listing of `target` (an existing directory): itself, its children and grandchildren
 * except hidden ones, sorted, capped at 16,000 characters, directories marked with a trailing
 * `/`, then a note on how many hidden entries the directory itself has.
 */
export const viewDirectory = (target: Target): Effect.Effect<string, ToolError> =>
  Effect.gen(function*() {
    const { boundary, display: path } = target
    const rootDir = yield* Effect.mapError(openDirectory(target, path), findError(path))
    const root = yield* visibleChildren(rootDir, path, boundary)
    const grandchildren = yield* Effect.forEach(
      root.children.filter((entry) => entry.isDirectory),
      (dir) =>
        openDirectoryAt(rootDir, dir.name, dir.shown, boundary).pipe(
          Effect.mapError(findError(dir.shown)),
          Effect.flatMap((opened) => visibleChildren(opened, dir.shown, boundary)),
          Effect.map(({ children }) => children),
          Effect.scoped
        ),
      { concurrency: CONCURRENCY }
    )
    const self: Entry = { shown: path, name: "", isDirectory: true }
    const entries = [self, ...root.children, ...grandchildren.flat()].sort(byBytes)
    const directories = new Set(entries.filter((entry) => entry.isDirectory).map((entry) => entry.shown))
    const stdout = entries.map((entry) => `${entry.shown}\n`).join("")
    const lines = strip(maybeTruncate(stdout, DIRECTORY_TRUNCATED_NOTICE))
      .split("\n")
      .map((line) => directories.has(line) ? `${line}/` : line)
    const hidden = root.dirents.filter((dirent) => isHidden(dirent.name)).length
    return `Here's the files and directories up to 2 levels deep in ${path}, excluding hidden items:\n${
      lines.join("\n")
    }` +
      (hidden > 0
        ? `\n\n${hidden} hidden files/directories in this directory are excluded. You can use 'ls -la ${path}' to see them.`
        : "")
  }).pipe(Effect.scoped)
