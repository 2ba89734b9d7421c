/**
 * A `/build` request read as it arrives: its fields kept, and its `context` part (base64 of a gzip
 * tar, as OpenHands' remote builder sends it) decoded chunk by chunk into a file of its own, so a
 * large upload costs disk, not the server's memory. The part is capped (`Images.maxUploadBytes`):
 * a request that declares or sends more is a 413 that names the limit, and nothing is built.
 * Unpacked for the engine, the context is capped again (unpackedContext.ts).
 */
import { Effect, Stream } from "effect"
import { HttpServerRequest, Multipart } from "effect/http"
import { rmSync } from "node:fs"
import { open } from "node:fs/promises"
import { join } from "node:path"
import { newContextDir } from "./contextFiles.ts"
import { ApiError } from "./errors.ts"
import type { UploadedContext } from "./images.ts"

const GZIP_MAGIC = [0x1f, 0x8b]

/** A form field (`target_image`, a tag) is an image reference: a few hundred bytes. */
const MAX_FIELD_BYTES = 64 * 1024

/** target_image, the context and the tags: a build names a handful of tags. */
const MAX_PARTS = 64

export interface BuildUpload {
  readonly fields: ReadonlyMap<string, ReadonlyArray<string>>
  readonly context: UploadedContext
}

const mebibytes = (bytes: number) => `${Math.floor(bytes / (1024 * 1024))} MiB`

const tooLarge = (maxBytes: number) =>
  new ApiError({
    status: 413,
    detail: `The build context is larger than this server's limit of ${
      mebibytes(maxBytes)
    } (base64); build a smaller context or raise --build-max-upload-mb`
  })

/** The refusal for what the multipart parser stopped at. */
const refusal = (maxBytes: number) => (error: Multipart.MultipartError) => {
  switch (error.reason._tag) {
    case "FileTooLarge":
    case "BodyTooLarge":
      return tooLarge(maxBytes)
    case "FieldTooLarge":
      return new ApiError({
        status: 413,
        detail: `A field of the build request is larger than ${MAX_FIELD_BYTES} bytes`
      })
    case "TooManyParts":
      return new ApiError({ status: 413, detail: `The build request has more than ${MAX_PARTS} parts` })
    default:
      return new ApiError({
        status: 400,
        detail: "A build request is multipart/form-data with context, target_image and tags"
      })
  }
}

const notGzip = new ApiError({ status: 400, detail: "The build context must be base64 of a gzip tar (context.tar.gz)" })

/** A decoder of base64 text that arrives in chunks (a quantum of 4 characters may span two). */
const base64Decoder = () => {
  let rest = ""
  return {
    push: (chunk: Uint8Array) => {
      const text = rest + Buffer.from(chunk).toString("latin1").replace(/\s+/g, "")
      const whole = text.length - (text.length % 4)
      rest = text.slice(whole)
      return Buffer.from(text.slice(0, whole), "base64")
    },
    end: () => Buffer.from(rest, "base64")
  }
}

/** Decode the `context` part into `path`; false when it is not a gzip tar. */
const writeContext = (content: Stream.Stream<Uint8Array, Multipart.MultipartError>, path: string) =>
  Effect.acquireUseRelease(
    Effect.promise(() => open(path, "wx", 0o600)),
    (file) =>
      Effect.gen(function*() {
        const decoder = base64Decoder()
        let head: Array<number> = []
        const write = (bytes: Buffer) =>
          Effect.promise(async () => {
            if (head.length < GZIP_MAGIC.length) head = [...head, ...bytes.subarray(0, GZIP_MAGIC.length)]
            if (bytes.length > 0) await file.write(bytes)
          })
        yield* Stream.runForEach(content, (chunk) => write(decoder.push(chunk)))
        yield* write(decoder.end())
        return GZIP_MAGIC.every((byte, i) => head[i] === byte)
      }),
    (file) => Effect.promise(() => file.close())
  )

/** Read the request's parts: its fields, and its context into a file (removed again on any failure). */
export const readBuildUpload = (maxBytes: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const declared = Number(request.headers["content-length"] ?? 0)
    if (declared > maxBytes + MAX_PARTS * MAX_FIELD_BYTES) return yield* tooLarge(maxBytes)
    const dir = newContextDir()
    const context: UploadedContext = {
      path: join(dir, "context.tar.gz"),
      remove: Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    }
    const fields = new Map<string, Array<string>>()
    let gzip: boolean | undefined
    yield* request.multipartStream.pipe(
      Stream.runForEach((part) =>
        Effect.gen(function*() {
          if (part.key !== "context") {
            if (part._tag !== "Field") {
              return yield* new ApiError({
                status: 400,
                detail: `A build request's one file is its context, not ${part.key}`
              })
            }
            fields.set(part.key, [...(fields.get(part.key) ?? []), part.value])
          } else if (gzip !== undefined) {
            return yield* new ApiError({ status: 400, detail: "A build request has one context" })
          } else {
            gzip = yield* writeContext(
              part._tag === "Field" ? Stream.make(Buffer.from(part.value)) : part.content,
              context.path
            )
          }
        })
      ),
      Effect.catchTag("MultipartError", (error) => Effect.fail(refusal(maxBytes)(error))),
      Effect.provideContext(
        Multipart.limitsServices({
          maxParts: MAX_PARTS,
          maxFieldSize: MAX_FIELD_BYTES,
          maxFileSize: maxBytes,
          maxTotalSize: maxBytes + MAX_PARTS * MAX_FIELD_BYTES
        })
      ),
      Effect.andThen(() => gzip === true ? Effect.void : Effect.fail(notGzip)),
      Effect.onError(() => context.remove)
    )
    return { fields, context } satisfies BuildUpload
  })
