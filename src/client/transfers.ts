/**
 * Files over HTTP: `POST /upload_file` streams a host file or a zip of a host directory from disk
 * as a form, `GET /download_files` streams the sandbox's zip into a host file chunk by chunk. A
 * refused transfer (bad destination, missing file, over a limit) is a `TransferError`.
 */
import { Effect, Stream } from "effect"
import { HttpClientRequest, type HttpClientResponse } from "effect/http"
import { openAsBlob } from "node:fs"
import { open } from "node:fs/promises"
import { withUploadPayload } from "../runtime/uploadPayload.ts"
import { TransferError } from "../schema/errors.ts"
import { REQUEST_TIMEOUTS } from "./policies.ts"
import type { Transport } from "./transport.ts"

/** A refused upload or download (bad destination, missing file, over a limit) is the caller's problem, not the server's. */
const transferRefused = (status: number, message: string) =>
  status === 400 || status === 404 || status === 413 ? new TransferError({ message }) : undefined

const cannotWrite = (path: string) => (cause: unknown) =>
  new TransferError({ message: `Cannot write ${path}: ${String(cause)}` })

export const makeTransfers = ({ disconnected, send }: Transport) => {
  const copyTo = Effect.fn("ActionClient.copyTo")(function*(
    hostSource: string,
    sandboxDest: string,
    recursive: boolean
  ) {
    return yield* withUploadPayload(hostSource, recursive, (payload) =>
      Effect.gen(function*() {
        // A file-backed Blob: the form is streamed from disk, not read into memory.
        const file = yield* Effect.tryPromise({
          try: () => openAsBlob(payload.source),
          catch: (cause) => new TransferError({ message: `Cannot read ${hostSource}: ${String(cause)}` })
        })
        const form = new FormData()
        form.append("file", file, payload.filename)
        return yield* send(
          "upload_file",
          HttpClientRequest.post("/upload_file").pipe(
            HttpClientRequest.setUrlParams({ destination: sandboxDest, recursive: String(payload.recursive) }),
            HttpClientRequest.bodyFormData(form)
          ),
          REQUEST_TIMEOUTS.upload,
          () => Effect.void,
          transferRefused
        )
      }))
  })

  /**
   * Stream a response's body into `path`, chunk by chunk, each written before the next is read.
   * A file that cannot be closed (its last writes lost) fails the download as one that cannot be written.
   */
  const saveBody = (response: HttpClientResponse.HttpClientResponse, path: string) =>
    Effect.acquireUseRelease(
      Effect.tryPromise({ try: () => open(path, "w"), catch: cannotWrite(path) }),
      (handle) =>
        response.stream.pipe(
          Stream.runForEach((chunk) => Effect.tryPromise({ try: () => handle.write(chunk), catch: cannotWrite(path) })),
          Effect.catchTag("HttpClientError", (e) => disconnected("download_files", e.message))
        ),
      (handle) => Effect.tryPromise({ try: () => handle.close(), catch: cannotWrite(path) })
    )

  const copyFrom = Effect.fn("ActionClient.copyFrom")(function*(sandboxPath: string, hostZipPath: string) {
    return yield* send(
      "download_files",
      HttpClientRequest.get("/download_files").pipe(HttpClientRequest.setUrlParams({ path: sandboxPath })),
      REQUEST_TIMEOUTS.download,
      (response) => saveBody(response, hostZipPath),
      transferRefused
    )
  })

  return { copyTo, copyFrom }
}
