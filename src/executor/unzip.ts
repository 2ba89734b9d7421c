/**
 * Extracting an uploaded zip into a directory, safely. yauzl reads the central
 * directory (what unzip tools trust), refuses absolute and `..` names, and checks
 * while inflating that each entry is exactly the size it declares; inflating is
 * Node's zlib, on the thread pool. The extraction runs in three steps so that a
 * refusal leaves nothing behind:
 *
 * 1. plan: the entry count, declared expanded size and ratio against `Limits`; each
 *    entry's path, component by component, against the destination as it is on disk
 *    (`lstat`, never following): a path through a symbolic link (a linked directory,
 *    a dangling link) or through a file is refused, and so is a file over a link;
 * 2. stage: the files are inflated into a private directory inside the destination
 *    (created exclusively, mode 0700), under numbers, not their names;
 * 3. commit: directories are made and staged files renamed into place, each path
 *    checked again just before; `rename` replaces a name, it never writes through one.
 *
 * The zip itself can plant no link: symbolic-link entries become regular files
 * holding the target's name (as Python's `zipfile` does).
 */
import { Effect } from "effect"
import { constants, createWriteStream, type Stats } from "node:fs"
import { chmod, lstat, mkdir, mkdtemp, open, realpath, rename } from "node:fs/promises"
import { join, resolve } from "node:path"
import { pipeline } from "node:stream/promises"
import type { Entry, ZipFile } from "yauzl"
import { TransferError } from "../schema/errors.ts"
import { removeInFinalizer } from "./cleanup.ts"
import { isWithin } from "./files/safeOpen.ts"
import { overLimit, type TransferLimits, ZIP_RATIO_FLOOR_BYTES } from "./limits.ts"

const UNIX = 3
const FILE_TYPE = 0o170000

/** One entry and where it goes. */
interface Planned {
  readonly entry: Entry
  readonly index: number
  readonly segments: ReadonlyArray<string>
  readonly directory: boolean
  /** Permission bits from a Unix zip, when it has them. */
  readonly mode: number | undefined
}

const refuse = (message: string) => new TransferError({ message })

const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => refuse(`${what}: ${(cause as Error).message ?? String(cause)}`) })

/** Permission bits of a regular file or directory entry made on Unix; links and devices have none here. */
const modeOf = (entry: Entry): number | undefined => {
  if (entry.versionMadeBy >> 8 !== UNIX) return undefined
  const mode = entry.externalFileAttributes >>> 16
  const type = mode & FILE_TYPE
  return (type === constants.S_IFREG || type === constants.S_IFDIR) && (mode & 0o777) !== 0 ? mode & 0o777 : undefined
}

const lstatOrNone = (path: string) =>
  Effect.tryPromise({
    try: () => lstat(path).catch((e: NodeJS.ErrnoException) => e.code === "ENOENT" ? undefined : Promise.reject(e)),
    catch: (cause) => refuse(`Cannot inspect ${path}: ${(cause as Error).message}`)
  })

/** Why an existing path cannot be a directory of the extraction, or undefined when it can. */
const notADirectory = (name: string, at: string, st: Stats) =>
  st.isSymbolicLink()
    ? `Zip entry "${name}" goes through the symbolic link ${at} in the destination; refused`
    : st.isDirectory()
    ? undefined
    : `Zip entry "${name}" needs ${at} to be a directory, but it is a file`

const openZip = (zipPath: string) =>
  Effect.acquireRelease(
    // yauzl is loaded on the first upload, not at every server's boot.
    io("Not a readable zip", () =>
      import("yauzl").then(({ openPromise }) =>
        openPromise(zipPath, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false })
      )),
    (zip) =>
      Effect.sync(() =>
        zip.close()
      )
  )

/** yauzl's refusal of an absolute or `..` name, said as ours. */
const nameRefusal = (message: string, root: string) => {
  const name = /^(?:absolute path|invalid relative path): (.*)$/s.exec(message)?.[1]
  return name === undefined ? undefined : `Zip entry "${name}" would be written outside ${root}`
}

/** The entries after the limits are checked, each before the next is read. */
const readEntries = Effect.fn("readEntries")(function*(zip: ZipFile, root: string, limits: TransferLimits) {
  if (zip.entryCount > limits.zipEntries) {
    return yield* refuse(overLimit(`The zip's ${zip.entryCount} entries`, "entry count", limits.zipEntries, "entries"))
  }
  const entries = yield* Effect.tryPromise({
    try: async () => {
      const all: Array<Entry> = []
      for await (const entry of zip.eachEntry()) all.push(entry)
      return all
    },
    catch: (cause) => refuse(nameRefusal(String((cause as Error).message), root) ?? `Not a valid zip: ${String(cause)}`)
  })
  const expanded = entries.reduce((sum, e) => sum + e.uncompressedSize, 0)
  if (expanded > limits.zipExpandedBytes) {
    return yield* refuse(
      overLimit(`The zip's expanded size (${expanded} bytes)`, "expanded size", limits.zipExpandedBytes, "bytes")
    )
  }
  if (expanded > ZIP_RATIO_FLOOR_BYTES && expanded > limits.zipRatio * zip.fileSize) {
    const ratio = Math.round(expanded / Math.max(zip.fileSize, 1))
    return yield* refuse(
      overLimit(`The zip's compression ratio (${ratio}:1)`, "compression ratio", limits.zipRatio, "to 1")
    )
  }
  return entries
})

/** Where each entry goes, refused when a path would go through a link or a file, on disk or in the zip. */
const plan = Effect.fn("plan")(function*(root: string, entries: ReadonlyArray<Entry>) {
  /** What each relative path is (or will be): on disk as found, or as the zip makes it. */
  const kinds = new Map<string, "dir" | "file" | "new">()
  const planned: Array<Planned> = []
  for (const [index, entry] of entries.entries()) {
    const name = entry.fileName
    const segments = name.split("/").filter((s) => s !== "" && s !== ".")
    const target = resolve(root, ...segments)
    if (!isWithin(target, root)) {
      return yield* refuse(`Zip entry "${name}" would be written outside ${root}`)
    }
    if (segments.length === 0) continue
    const directory = name.endsWith("/")
    const parents = directory ? segments.length : segments.length - 1
    for (let i = 1; i <= parents; i++) {
      const at = segments.slice(0, i).join("/")
      const known = kinds.get(at)
      if (known === "file") return yield* refuse(`Zip entry "${name}" needs ${at} to be a directory, but it is a file`)
      if (known !== undefined) continue
      const st = kinds.get(segments.slice(0, i - 1).join("/")) === "new"
        ? undefined
        : yield* lstatOrNone(join(root, at))
      const why = st === undefined ? undefined : notADirectory(name, at, st)
      if (why !== undefined) return yield* refuse(why)
      kinds.set(at, st === undefined ? "new" : "dir")
    }
    if (!directory) {
      const at = segments.join("/")
      const known = kinds.get(at)
      if (known === "dir" || known === "new") return yield* refuse(`Zip entry "${name}" is a file where a directory is`)
      const st = known === "file" ? undefined : yield* lstatOrNone(join(root, at))
      if (st?.isSymbolicLink()) {
        return yield* refuse(`Zip entry "${name}" would replace the symbolic link ${at}; refused`)
      }
      if (st?.isDirectory()) return yield* refuse(`Zip entry "${name}" is a file where a directory is`)
      kinds.set(at, "file")
    }
    planned.push({ entry, index, segments, directory, mode: modeOf(entry) })
  }
  return planned
})

/** Inflate every file entry into `stage/<index>`, created exclusively. */
const stageFiles = Effect.fn("stageFiles")(function*(zip: ZipFile, planned: ReadonlyArray<Planned>, stage: string) {
  for (const p of planned) {
    if (p.directory) continue
    const file = join(stage, String(p.index))
    yield* io(`Cannot extract "${p.entry.fileName}"`, async () => {
      await pipeline(await zip.openReadStreamPromise(p.entry), createWriteStream(file, { flags: "wx" }))
      if (p.mode !== undefined) await chmod(file, p.mode)
    })
  }
})

/** Make `segments` as directories under `root`, each checked with `lstat` just before. */
const ensureDirectory = (root: string, name: string, segments: ReadonlyArray<string>, made: Set<string>) =>
  Effect.gen(function*() {
    for (let i = 1; i <= segments.length; i++) {
      const at = segments.slice(0, i).join("/")
      if (made.has(at)) continue
      const path = join(root, at)
      const st = yield* lstatOrNone(path)
      if (st === undefined) yield* io(`Cannot create ${at}`, () => mkdir(path))
      const why = notADirectory(name, at, st ?? (yield* io(`Cannot create ${at}`, () => lstat(path))))
      if (why !== undefined) return yield* refuse(why)
      made.add(at)
    }
  })

/** Set a directory's mode through a descriptor opened without following a link. */
const chmodDirectory = (path: string, mode: number) =>
  io(`Cannot set the mode of ${path}`, async () => {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
    await handle.chmod(mode).finally(() => handle.close())
  })

/** Move the staged files into place; directory modes last, so a read-only directory still receives its files. */
const commit = Effect.fn("commit")(function*(root: string, planned: ReadonlyArray<Planned>, stage: string) {
  const made = new Set<string>()
  for (const p of planned) {
    const name = p.entry.fileName
    if (p.directory) {
      yield* ensureDirectory(root, name, p.segments, made)
      continue
    }
    yield* ensureDirectory(root, name, p.segments.slice(0, -1), made)
    const target = join(root, ...p.segments)
    const st = yield* lstatOrNone(target)
    if (st?.isSymbolicLink() || st?.isDirectory()) return yield* refuse(`Zip entry "${name}" cannot replace ${target}`)
    yield* io(`Cannot write "${name}"`, () => rename(join(stage, String(p.index)), target))
  }
  for (let i = planned.length - 1; i >= 0; i--) {
    const p = planned[i]!
    if (p.directory && p.mode !== undefined) yield* chmodDirectory(join(root, ...p.segments), p.mode)
  }
})

/**
 * Extract the zip file `zipPath` into the existing directory `dest`, or refuse it whole
 * (`TransferError` saying which limit or entry) with nothing written.
 */
export const extractZip = Effect.fn("extractZip")(function*(zipPath: string, dest: string, limits: TransferLimits) {
  const root = yield* io(`Cannot open ${dest}`, () => realpath(dest))
  const zip = yield* openZip(zipPath)
  const planned = yield* plan(root, yield* readEntries(zip, root, limits))
  const stage = yield* Effect.acquireRelease(
    io(`Cannot extract into ${dest}`, () => mkdtemp(join(root, ".effect-sandbox-unzip-"))),
    removeInFinalizer
  )
  yield* stageFiles(zip, planned, stage)
  yield* commit(root, planned, stage)
}, Effect.scoped)
