/**
 * Copying files in and out and listing directories, with the action server's
 * semantics (spec §2.4) so every transport behaves alike: an upload's
 * destination is always a directory; a `.zip` or recursive upload is extracted
 * there; a download is a zip (of a directory's contents, or of a single file:
 * OpenHands returns an empty zip for a file, a plain bug we fix).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { readdirSync, statSync } from "node:fs"
import { copyFile, lstat, mkdir, rename } from "node:fs/promises"
import { join } from "node:path"
import { TransferError } from "../schema/errors.ts"
import type { UploadRequest } from "../services/ActionExecutor.ts"
import { removeInFinalizer } from "./cleanup.ts"
import { Limits } from "./limits.ts"
import { extractZip } from "./unzip.ts"
import type { Workspace } from "./workspace.ts"
import { walkTree, writeZip } from "./zip.ts"

const attempt = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (cause) => new TransferError({ message: `${what}: ${(cause as Error).message ?? cause}` })
  })

const resolveIn = (ws: Workspace, path: string, cwd: string) =>
  ws.resolve(path, cwd).pipe(Effect.mapError((e) => new TransferError({ message: e.message })))

/**
 * Copy a plain upload to `destination/filename` through a fresh name and a rename, so a
 * symbolic link planted under that name is replaced, never written through.
 */
const placeFile = (source: string, destination: string, filename: string) =>
  Effect.gen(function*() {
    const target = join(destination, filename)
    const existing = yield* Effect.promise(() => lstat(target).catch(() => undefined))
    if (existing?.isSymbolicLink() || existing?.isDirectory()) {
      return yield* new TransferError({
        message: `Cannot write ${filename}: ${target} is a symbolic link or directory`
      })
    }
    const staged = join(destination, `.effect-sandbox-upload-${randomUUID()}`)
    yield* attempt(`Cannot write ${filename}`, async () => {
      await copyFile(source, staged, 1 /* COPYFILE_EXCL */)
      await rename(staged, target)
    }).pipe(Effect.ensuring(removeInFinalizer(staged)))
  })

/** Store an uploaded file or zip in the sandbox; a zip beyond the limits is refused whole. */
export const upload = Effect.fn("Transfer.upload")(function*(ws: Workspace, cwd: string, request: UploadRequest) {
  const destination = yield* resolveIn(ws, request.destination, cwd)
  const isZip = request.filename.endsWith(".zip")
  if (request.recursive && !isZip) {
    return yield* new TransferError({ message: "Recursive uploads must be zip files" })
  }
  yield* attempt(`Cannot create ${request.destination}`, () => mkdir(destination, { recursive: true }))
  if (!isZip) return yield* placeFile(request.source, destination, request.filename)
  const limits = yield* Limits
  yield* extractZip(request.source, destination, limits).pipe(
    Effect.mapError((e) =>
      new TransferError({ message: `Cannot extract ${request.filename} into ${request.destination}: ${e.message}` })
    )
  )
})

/**
 * Write a zip of a sandbox file or directory to the local file `outFile`, streamed; a tree
 * beyond the download limits is refused before anything is written.
 */
export const download = Effect.fn("Transfer.download")(
  function*(ws: Workspace, cwd: string, path: string, outFile: string) {
    const source = yield* resolveIn(ws, path, cwd)
    const limits = yield* Limits
    const entries = yield* walkTree(source, {
      entries: limits.zipEntries,
      bytes: limits.downloadBytes,
      what: "download"
    })
    yield* writeZip(entries, outFile).pipe(
      Effect.mapError((e) => new TransferError({ message: `Cannot zip ${path}: ${e.message}` }))
    )
  }
)

const byName = (a: string, b: string) => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * Entries of a directory (relative paths join `cwd`): bare names, directories with a trailing `/` first, each
 * group sorted case-insensitively, hidden entries included; `[]` for anything
 * that is not a readable directory (as OpenHands' `/list_files`).
 */
export const listFiles = (ws: Workspace, cwd: string, path?: string): Effect.Effect<ReadonlyArray<string>> =>
  ws.resolve(path ?? cwd, cwd).pipe(
    Effect.map((dir) => {
      try {
        const entries = readdirSync(dir, { withFileTypes: true })
        const isDir = (e: (typeof entries)[number]) => {
          if (e.isDirectory()) return true
          try {
            return e.isSymbolicLink() && statSync(join(dir, e.name)).isDirectory()
          } catch {
            return false
          }
        }
        const dirs = entries.filter(isDir).map((e) => `${e.name}/`).sort(byName)
        const files = entries.filter((e) => !isDir(e)).map((e) => e.name).sort(byName)
        return [...dirs, ...files]
      } catch {
        return []
      }
    }),
    Effect.orElseSucceed(() => [])
  )
