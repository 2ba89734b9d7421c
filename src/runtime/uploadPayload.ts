/**
 * What `copyTo` sends, whatever the transport: a single file as itself, or a
 * directory as a zip whose entries keep the directory's own name (OpenHands'
 * upload format), streamed to a temporary file removed afterwards (a tree over
 * the upload limits is refused before anything is sent).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { removeInFinalizer } from "../executor/cleanup.ts"
import { Limits } from "../executor/limits.ts"
import { walkTree, writeZip } from "../executor/zip.ts"
import { TransferError } from "../schema/errors.ts"

export interface UploadPayload {
  /** A local file holding the payload. */
  readonly source: string
  /** The name it is uploaded under (`x.txt`, or `<dir>.zip`). */
  readonly filename: string
  readonly recursive: boolean
}

export const withUploadPayload = <A, E, R>(
  hostSource: string,
  recursive: boolean,
  use: (payload: UploadPayload) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | TransferError, R> =>
  Effect.suspend(() => {
    const source = resolve(hostSource)
    if (!existsSync(source)) {
      return Effect.fail(new TransferError({ message: `Source file ${hostSource} does not exist` }))
    }
    if (!recursive) return use({ source, filename: basename(source), recursive })
    const zip = join(tmpdir(), `effect-sandbox-upload-${randomUUID()}.zip`)
    return Effect.acquireUseRelease(
      Effect.gen(function*() {
        const limits = yield* Limits
        const entries = yield* walkTree(
          source,
          { entries: limits.zipEntries, bytes: limits.uploadBytes, what: "upload" },
          basename(source)
        )
        yield* writeZip(entries, zip).pipe(
          Effect.mapError((e) => new TransferError({ message: `Cannot zip ${hostSource}: ${e.message}` }))
        )
      }),
      () => use({ source: zip, filename: `${basename(source)}.zip`, recursive }),
      () => removeInFinalizer(zip)
    )
  })
