/**
 * Making zip archives for copying trees out of (and into) a sandbox, OpenHands'
 * transfer format. The tree is walked first (lstat only: symbolic links, devices
 * and FIFOs are left out) and refused, before a byte is written, when it has more
 * entries or bytes than the limits allow; yazl then streams the files through
 * Node's zlib (on the thread pool, off the event loop) into the output file, so
 * memory stays flat whatever the size. Unix modes travel in the entries' external
 * attributes so executable scripts stay executable. See also `unzip.ts`.
 */
import { Effect } from "effect"
import { constants, createWriteStream } from "node:fs"
import { lstat, open, readdir, realpath } from "node:fs/promises"
import { basename, join } from "node:path"
import type { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { TransferError } from "../schema/errors.ts"
import { overLimit } from "./limits.ts"

/** One file or directory to put in a zip. */
export interface ZipSource {
  /** Where it is on disk. */
  readonly path: string
  /** Its name in the zip (`a/b.txt`, no trailing slash). */
  readonly name: string
  readonly directory: boolean
  /** `st_mode`, type bits included. */
  readonly mode: number
  /** Bytes, as found by the walk (0 for a directory). */
  readonly size: number
}

export interface WalkLimits {
  readonly entries: number
  readonly bytes: number
  /** Names the byte limit in the refusal ("download", "upload"). */
  readonly what: string
}

const fail = (message: string) => Effect.fail(new TransferError({ message }))

/**
 * The entries of a zip of `path`: a directory's contents (names relative to it, under
 * `prefix/` when given), or a single file under its base name. Stops, with a
 * `TransferError` naming the limit, as soon as the tree is over one of them.
 */
export const walkTree = Effect.fn("walkTree")(function*(asked: string, limits: WalkLimits, prefix = "") {
  const entries: Array<ZipSource> = []
  let bytes = 0
  const add = (entry: ZipSource) => {
    entries.push(entry)
    bytes += entry.size
    if (entries.length > limits.entries) {
      return fail(overLimit(`The ${limits.what} of ${asked}`, "entry count", limits.entries, "entries"))
    }
    if (bytes > limits.bytes) {
      return fail(overLimit(`The ${limits.what} of ${asked}`, limits.what, limits.bytes, "bytes"))
    }
    return Effect.void
  }
  const stat = (p: string) =>
    Effect.tryPromise({ try: () => lstat(p), catch: () => new TransferError({ message: `File not found: ${asked}` }) })
  // The path asked for may be a link (to the workspace, say); what is inside it is not followed.
  const path = yield* Effect.tryPromise({
    try: () => realpath(asked),
    catch: () => new TransferError({ message: `File not found: ${asked}` })
  })
  const root = yield* stat(path)
  if (!root.isDirectory()) {
    if (!root.isFile()) return yield* fail(`${asked} is not a regular file or a directory`)
    yield* add({ path, name: basename(asked), directory: false, mode: root.mode, size: root.size })
    return entries
  }
  if (prefix !== "") yield* add({ path, name: prefix, directory: true, mode: root.mode, size: 0 })
  const walk = (dir: string, relative: string): Effect.Effect<void, TransferError> =>
    Effect.gen(function*() {
      const names = yield* Effect.tryPromise({
        try: () => readdir(dir),
        catch: (cause) => new TransferError({ message: `Cannot read ${dir}: ${(cause as Error).message}` })
      })
      for (const name of names.sort()) {
        const child = join(dir, name)
        const entryName = relative === "" ? name : `${relative}/${name}`
        const st = yield* stat(child).pipe(Effect.option)
        if (st._tag === "None") continue
        if (st.value.isDirectory()) {
          yield* add({ path: child, name: entryName, directory: true, mode: st.value.mode, size: 0 })
          yield* walk(child, entryName)
        } else if (st.value.isFile()) {
          yield* add({ path: child, name: entryName, directory: false, mode: st.value.mode, size: st.value.size })
        }
      }
    })
  yield* walk(path, prefix)
  return entries
})

/**
 * A file's bytes as the walk saw them: opened without following a link planted since
 * (and without blocking on a FIFO), read no further than the size the walk found.
 */
const contents = async (entry: ZipSource) => {
  const handle = await open(entry.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  return handle.createReadStream({ end: entry.size - 1 })
}

/** Stream a zip of `entries` into `outFile`; a file that changed size since the walk fails it. */
export const writeZip = Effect.fn("writeZip")(function*(entries: ReadonlyArray<ZipSource>, outFile: string) {
  // yazl is loaded on the first download, not at every server's boot.
  const { ZipFile } = yield* Effect.promise(() => import("yazl"))
  yield* Effect.tryPromise({
    try: () =>
      new Promise<void>((resolve, reject) => {
        const zip = new ZipFile()
        // yazl reports a bad entry on the ZipFile and a read error on the read stream only:
        // either ends the output, so the pipeline fails too and the file is closed.
        const abort = (error: Error) => {
          reject(error)
          ;(zip.outputStream as Readable).destroy(error)
        }
        zip.on("error", abort)
        pipeline(zip.outputStream, createWriteStream(outFile)).then(resolve, reject)
        for (const entry of entries) {
          if (entry.directory) {
            zip.addEmptyDirectory(entry.name, { mode: entry.mode })
          } else if (entry.size === 0) {
            zip.addBuffer(Buffer.alloc(0), entry.name, { mode: entry.mode })
          } else {
            zip.addReadStreamLazy(entry.name, { mode: entry.mode, size: entry.size }, (callback) => {
              contents(entry).then((stream) => callback(null, stream.on("error", abort)), abort)
            })
          }
        }
        zip.end()
      }),
    catch: (cause) => new TransferError({ message: (cause as Error).message ?? String(cause) })
  })
})
