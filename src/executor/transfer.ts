/**
 * Copying files in and out and listing directories, with the action server's
 * semantics (spec §2.4) so every transport behaves alike: an upload's
 * destination is always a directory; a `.zip` or recursive upload is extracted
 * there; a download is a zip (of a directory's contents, or of a single file:
 * OpenHands returns an empty zip for a file, a plain bug we fix).
 */
import { Effect } from "effect"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { TransferError } from "../schema/errors.ts"
import type { UploadRequest } from "../services/ActionExecutor.ts"
import type { Workspace } from "./workspace.ts"
import { extractZip, zipDirectory, zipFile } from "./zip.ts"

const attempt = <A>(what: string, f: () => A) =>
  Effect.try({
    try: f,
    catch: (cause) => new TransferError({ message: `${what}: ${(cause as Error).message ?? cause}` })
  })

const resolveIn = (ws: Workspace, path: string, cwd: string) =>
  ws.resolve(path, cwd).pipe(Effect.mapError((e) => new TransferError({ message: e.message })))

/** Store an uploaded file or zip in the sandbox. */
export const upload = (ws: Workspace, cwd: string, request: UploadRequest): Effect.Effect<void, TransferError> =>
  Effect.gen(function*() {
    const destination = yield* resolveIn(ws, request.destination, cwd)
    const isZip = request.filename.endsWith(".zip")
    if (request.recursive && !isZip) {
      return yield* new TransferError({ message: "Recursive uploads must be zip files" })
    }
    yield* attempt(`Cannot create ${request.destination}`, () => mkdirSync(destination, { recursive: true }))
    if (isZip) {
      yield* attempt(
        `Cannot extract ${request.filename} into ${request.destination}`,
        () => extractZip(readFileSync(request.source), destination)
      )
    } else {
      yield* attempt(
        `Cannot write ${request.filename} into ${request.destination}`,
        () => copyFileSync(request.source, join(destination, request.filename))
      )
    }
  })

/** Write a zip of a sandbox file or directory to the local file `outFile`. */
export const download = (
  ws: Workspace,
  cwd: string,
  path: string,
  outFile: string
): Effect.Effect<void, TransferError> =>
  Effect.gen(function*() {
    const source = yield* resolveIn(ws, path, cwd)
    const stat = yield* Effect.try({
      try: () => statSync(source),
      catch: () => new TransferError({ message: `File not found: ${path}` })
    })
    const zip = yield* attempt(`Cannot zip ${path}`, () => stat.isDirectory() ? zipDirectory(source) : zipFile(source))
    yield* attempt(`Cannot write ${outFile}`, () => writeFileSync(outFile, zip))
  })

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
