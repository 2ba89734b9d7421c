/**
 * File transfer endpoints (spec §2.4): `POST /list_files`, `POST /upload_file`
 * (multipart field `file`; a zip is extracted), `GET /download_files` (a zip).
 * Differences from OpenHands, on purpose: client mistakes are 4xx with their own
 * status (OpenHands wraps them in 500 "400: ..."), a single file downloads as
 * a zip holding that file (OpenHands sends an empty zip), and uploads, zips and
 * downloads are bounded (`Limits`): over a limit is 413 with a detail naming it.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { randomUUID } from "node:crypto"
import { open } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, isAbsolute, join } from "node:path"
import { removeInFinalizer } from "../../executor/cleanup.ts"
import { isOverLimit, Limits, overLimit } from "../../executor/limits.ts"
import { ActionExecutor } from "../../services/ActionExecutor.ts"
import { BadRequest, failed, isRecord, optionalJsonBody, searchParams } from "../responses.ts"
import { ENDPOINTS } from "./paths.ts"

/**
 * A `content-disposition` for any file name: an ASCII fallback plus the exact
 * name in RFC 5987 form (a raw non-Latin-1 name or newline would be rejected).
 */
const attachment = (name: string) => {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_")
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}

/** A transfer's refusal: 413 when it is over a limit, else 400. */
const refused = (error: { readonly message: string }) =>
  new BadRequest(isOverLimit(error.message) ? 413 : 400, error.message)

const uploadTooLarge = (limit: number) => new BadRequest(413, overLimit("The upload", "upload", limit, "bytes"))

/** A file's bytes as a stream, from a descriptor opened now (so the name can go at once). */
const openOnce = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(path, "r")
      const { size } = await handle.stat()
      return { size, body: NodeStream.fromReadable({ evaluate: () => handle.createReadStream() }) }
    },
    catch: (cause) => new BadRequest(500, `Cannot send the download: ${(cause as Error).message}`)
  })

const booleanParam = (value: string | null) => value !== null && ["true", "1", "yes"].includes(value.toLowerCase())

export const fileRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const executor = yield* ActionExecutor

  yield* router.add(
    ...ENDPOINTS.listFiles,
    Effect.gen(function*() {
      const body = yield* optionalJsonBody({})
      const path = isRecord(body) ? body["path"] : undefined
      if (!isRecord(body) || (path !== undefined && path !== null && typeof path !== "string")) {
        return yield* Effect.fail(new BadRequest(400, "The body must be {\"path\": \"<directory>\"} (path optional)."))
      }
      return HttpServerResponse.jsonUnsafe(yield* executor.listFiles(typeof path === "string" ? path : undefined))
    }).pipe(Effect.catch(failed))
  )

  yield* router.add(
    ...ENDPOINTS.uploadFile,
    Effect.gen(function*() {
      const params = yield* searchParams
      const destination = params.get("destination") ?? "/"
      const recursive = booleanParam(params.get("recursive"))
      if (!isAbsolute(destination)) {
        return yield* Effect.fail(new BadRequest(400, "Destination must be an absolute path"))
      }
      const request = yield* HttpServerRequest.HttpServerRequest
      const limits = yield* Limits
      const declared = Number(request.headers["content-length"] ?? "0")
      if (declared > limits.uploadBytes) return yield* Effect.fail(uploadTooLarge(limits.uploadBytes))
      const parts = yield* request.multipart.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limits.uploadBytes)),
        Effect.mapError((e) =>
          e.reason._tag === "BodyTooLarge" || e.reason._tag === "FileTooLarge"
            ? uploadTooLarge(limits.uploadBytes)
            : new BadRequest(400, `Cannot read the multipart upload: ${e.message}`)
        )
      )
      const file = (parts["file"] ?? []) as ReadonlyArray<unknown>
      const upload = file[0]
      if (!Multipart.isPersistedFile(upload)) {
        return yield* Effect.fail(new BadRequest(400, "The upload needs a multipart file field named \"file\"."))
      }
      const filename = basename(upload.name)
      yield* executor.upload({ source: upload.path, filename, destination, recursive }).pipe(
        Effect.mapError(refused)
      )
      return HttpServerResponse.jsonUnsafe({ filename, destination, recursive })
    }).pipe(Effect.scoped, Effect.catch(failed))
  )

  yield* router.add(
    ...ENDPOINTS.downloadFiles,
    Effect.gen(function*() {
      const path = (yield* searchParams).get("path")
      if (path === null || !isAbsolute(path)) {
        return yield* Effect.fail(new BadRequest(400, "Path must be an absolute path"))
      }
      const zip = join(tmpdir(), `effect-sandbox-download-${randomUUID()}.zip`)
      // The zip is made (streamed, within the download limits) before the answer starts, so a
      // refusal is a status and a detail; it is removed as soon as it is open for sending.
      const sent = yield* executor.download(path, zip).pipe(
        Effect.mapError((e) => e.message.startsWith("File not found") ? new BadRequest(404, e.message) : refused(e)),
        Effect.andThen(openOnce(zip)),
        Effect.ensuring(removeInFinalizer(zip))
      )
      return HttpServerResponse.stream(sent.body, {
        contentType: "application/zip",
        contentLength: sent.size,
        headers: { "content-disposition": attachment(`${basename(path) || "root"}.zip`) }
      })
    }).pipe(Effect.catch(failed))
  )
}))
