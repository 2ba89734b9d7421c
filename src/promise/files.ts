/**
 * `sandbox.files`: read, write and list files as a program expects them, over the `Runtime`'s file
 * calls. `write` stores the text exactly: the wire's `FileWriteAction` gives every line a trailing
 * newline (OpenHands' rule, kept for agents), so the text goes through the runtime's copy instead,
 * which every runtime has and which keeps the bytes. Relative paths are the workspace's.
 */
import { Effect } from "effect"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, posix } from "node:path"
import type { RuntimeShape } from "../services/Runtime.ts"
import { FileError } from "./errors.ts"

/** A sandbox path: as given when absolute, else in the workspace. */
const inSandbox = (rt: RuntimeShape, path: string) => posix.resolve(rt.info.workspace, path)

/** The whole text of a UTF-8 file; a `FileError` with the runtime's text when it cannot be read. */
export const readFile = Effect.fn("promise.files.read")(function*(rt: RuntimeShape, path: string) {
  const observation = yield* rt.read(inSandbox(rt, path))
  if (observation._tag === "ErrorObservation") return yield* new FileError({ path, message: observation.content })
  return observation.content
})

/** A host directory of its own for the duration of the copy, removed after. */
const hostScratch = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "effect-sandbox-write-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** Write `content` to `path` exactly (parents created, an existing file replaced). */
export const writeFileIn = Effect.fn("promise.files.write")(
  function*(rt: RuntimeShape, path: string, content: string) {
    const target = inSandbox(rt, path)
    const scratch = yield* hostScratch
    const source = join(scratch, posix.basename(target))
    yield* Effect.promise(() => writeFile(source, content))
    yield* rt.copyTo(source, posix.dirname(target))
  },
  Effect.scoped
)

/** The names in a directory (default the workspace); directories end in `/` and come first. */
export const listFiles = (rt: RuntimeShape, path?: string) =>
  rt.listFiles(path === undefined ? undefined : inSandbox(rt, path))
