/**
 * The bytes the file viewer (spec §2.5) shows: the file is found and opened as every file action
 * opens what an agent names (the workspace's mapping and restriction, then `safeOpen`: no devices,
 * FIFOs or sockets, no escape through links when restricted, a bounded read). OpenHands' viewer
 * opens any path with Python's `open()`; the viewer here must not be a way around the executor's
 * rules, and one request must not take the server's memory.
 */
import { Effect, Schema } from "effect"
import type { Workspace } from "../workspace.ts"
import { openFile, readBounded } from "./safeOpen.ts"

/**
 * The largest file the viewer shows: its base64 (a third larger) is inlined into the page, as
 * OpenHands does, so the page stays well under what Chromium renders without trouble.
 */
export const MAX_VIEW_BYTES = 16 * 1024 * 1024

/** Why a file cannot be shown; the viewer answers each reason with its own status. */
export class FileViewError extends Schema.TaggedError<FileViewError>()("FileViewError", {
  reason: Schema.Literals(["NotFound", "IsDirectory", "Refused", "TooLarge"]),
  message: Schema.String
}) {}

/** The file's bytes, read through the descriptor that passed the checks. */
export const viewFile = Effect.fn("viewFile")(function*(ws: Workspace, cwd: string, path: string) {
  const located = yield* ws.locate(path, cwd).pipe(
    Effect.mapError((e) => new FileViewError({ reason: "Refused", message: e.message }))
  )
  return yield* openFile(located, path).pipe(
    Effect.flatMap((file) => readBounded(file, MAX_VIEW_BYTES)),
    Effect.scoped,
    Effect.catchTags({
      FsFailure: (e) =>
        Effect.fail(
          e.code === "ENOENT" || e.code === "ENOTDIR"
            ? new FileViewError({ reason: "NotFound", message: `File not found: ${path}` })
            : e.code === "EISDIR"
            ? new FileViewError({ reason: "IsDirectory", message: `Path is a directory: ${path}` })
            : new FileViewError({ reason: "Refused", message: e.message })
        ),
      FileTooLarge: ({ size }) =>
        Effect.fail(
          new FileViewError({
            reason: "TooLarge",
            message:
              `${path} is too large to view (${size} bytes; the viewer shows files of at most ${MAX_VIEW_BYTES} bytes)`
          })
        ),
      UnsafeFile: (e) => Effect.fail(new FileViewError({ reason: "Refused", message: e.message }))
    })
  )
})
