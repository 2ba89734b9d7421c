/**
 * The fallback for a blueprint without our payload but with a Node recent enough to run it: the
 * payload (internal/payload.ts) uploaded at each start through Runloop's `upload_file` (one
 * multipart request per file, paths relative to the devbox user's home) into
 * `~/.effect-sandbox/payload`, and `~/workspace` as the workspace. It costs the upload on every
 * start, and the server's files belong to the devbox user (docs/runtimes/runloop.md).
 */
import type { Runloop } from "@runloop/api-client"
import { Effect } from "effect"
import { createReadStream } from "node:fs"
import { dirname, join, posix } from "node:path"
import { shellQuote } from "../../quoting/shellQuote.ts"
import type { RuntimeStartError } from "../../schema/errors.ts"
import { serverPayload } from "../internal/payload.ts"
import { runloopCall } from "./errors.ts"

/** Where the payload goes, relative to the user's home. */
const PAYLOAD_DIR = ".effect-sandbox/payload"

/** What the uploaded server runs with. */
export interface UploadedServer {
  readonly node: string
  readonly entry: string
  readonly workspace: string
}

/**
 * Upload the payload for `node` into the devbox whose user's home is `home`; `run` runs a shell
 * command there (the directories are made first: `upload_file` writes files, not their parents).
 */
export const uploadPayload = Effect.fn("RunloopRuntime.uploadPayload")(function*(input: {
  readonly api: Runloop
  readonly devboxId: string
  readonly home: string
  readonly node: string
  readonly run: (what: string, command: string) => Effect.Effect<string, RuntimeStartError>
}) {
  const { directory, manifest } = yield* serverPayload
  const directories = new Set(manifest.files.map((file) => posix.join(input.home, PAYLOAD_DIR, dirname(file))))
  const workspace = `${input.home}/workspace`
  yield* input.run(
    "make the payload's directories and the workspace",
    `mkdir -p ${[...directories, workspace].map(shellQuote).join(" ")}`
  )
  yield* Effect.forEach(manifest.files, (file) =>
    runloopCall(
      `upload ${file} into devbox ${input.devboxId}`,
      () =>
        input.api.devboxes.uploadFile(input.devboxId, {
          path: posix.join(PAYLOAD_DIR, file),
          file: createReadStream(join(directory, file))
        })
    ), { concurrency: 4, discard: true })
  return {
    node: input.node,
    entry: posix.join(input.home, PAYLOAD_DIR, "server.mjs"),
    workspace
  } satisfies UploadedServer
})
