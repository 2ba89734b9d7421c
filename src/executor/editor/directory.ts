/**
 * `view` on a directory. OHEditor shells out to `find -L <p> -maxdepth 2` minus hidden entries
 * at depths 1 and 2 (`-path '<p>/.*'`, `-path '<p>/<any>/.*'`), piped through `sort`, plus a
 * second `find` counting the hidden entries of `<p>`. This walk reproduces that output without a
 * shell, which also makes paths with spaces or quotes work (interpolated unquoted, they break the
 * Python editor).
 */
import { Effect } from "effect"
import type { Dirent } from "node:fs"
import * as fs from "node:fs/promises"
import * as nodePath from "node:path"
import { ToolError } from "./errors.ts"
import { DIRECTORY_TRUNCATED_NOTICE, maybeTruncate } from "./format.ts"
import { strip } from "./python.ts"
import type { Target } from "./validate.ts"

interface Entry {
  /** The path as `find` prints it: the agent's directory path joined with the names below it. */
  readonly shown: string
  readonly real: string
  readonly isDirectory: boolean
}

/** How many directories are read at once. */
const CONCURRENCY = 16

const isHidden = (name: string): boolean => name.startsWith(".")

/** `find` reports an unreadable directory on stderr, which the editor turns into an error. */
const readEntries = (dir: Entry): Effect.Effect<Array<Dirent>, ToolError> =>
  Effect.tryPromise({
    try: () => fs.readdir(dir.real, { withFileTypes: true }),
    catch: (cause) => {
      const { code, message } = cause as NodeJS.ErrnoException
      return new ToolError({ message: `find: ‘${dir.shown}’: ${code === "EACCES" ? "Permission denied" : message}\n` })
    }
  })

/** An entry below `parent`; `find -L` follows symlinks, so a link to a directory is a directory. */
const child = (parent: Entry, dirent: Dirent): Effect.Effect<Entry> => {
  const real = nodePath.join(parent.real, dirent.name)
  const shown = parent.shown.endsWith("/") ? parent.shown + dirent.name : `${parent.shown}/${dirent.name}`
  const directory = dirent.isSymbolicLink()
    ? Effect.promise(() => fs.stat(real).then((stats) => stats.isDirectory(), () => false))
    : Effect.succeed(dirent.isDirectory())
  return Effect.map(directory, (isDirectory) => ({ shown, real, isDirectory }))
}

const visibleChildren = (parent: Entry, dirents: ReadonlyArray<Dirent>): Effect.Effect<Array<Entry>> =>
  Effect.forEach(dirents.filter((dirent) => !isHidden(dirent.name)), (dirent) => child(parent, dirent))

/** The order of `sort` under the runtime's `C.UTF-8` locale: by UTF-8 bytes. */
const byBytes = (a: Entry, b: Entry): number => Buffer.compare(Buffer.from(a.shown), Buffer.from(b.shown))

/**
 * The listing of `target` (an existing directory): itself, its children and grandchildren
 * except hidden ones, sorted, capped at 16,000 characters, directories marked with a trailing
 * `/`, then a note on how many hidden entries the directory itself has.
 */
export const viewDirectory = (target: Target): Effect.Effect<string, ToolError> =>
  Effect.gen(function*() {
    const root: Entry = { shown: target.display, real: target.real, isDirectory: true }
    const rootDirents = yield* readEntries(root)
    const children = yield* visibleChildren(root, rootDirents)
    const grandchildren = yield* Effect.forEach(
      children.filter((entry) => entry.isDirectory),
      (dir) => Effect.flatMap(readEntries(dir), (dirents) => visibleChildren(dir, dirents)),
      { concurrency: CONCURRENCY }
    )
    const entries = [root, ...children, ...grandchildren.flat()].sort(byBytes)
    const directories = new Set(entries.filter((entry) => entry.isDirectory).map((entry) => entry.shown))
    const stdout = entries.map((entry) => `${entry.shown}\n`).join("")
    const lines = strip(maybeTruncate(stdout, DIRECTORY_TRUNCATED_NOTICE))
      .split("\n")
      .map((line) => directories.has(line) ? `${line}/` : line)
    const hidden = rootDirents.filter((dirent) => isHidden(dirent.name)).length
    const path = target.display
    return `Here's the files and directories up to 2 levels deep in ${path}, excluding hidden items:\n${
      lines.join("\n")
    }` +
      (hidden > 0
        ? `\n\n${hidden} hidden files/directories in this directory are excluded. You can use 'ls -la ${path}' to see them.`
        : "")
  })
