/**
 * File transfer endpoints (spec §2.4): `POST /list_files`, `POST /upload_file`
 * (multipart field `file`; a zip is extracted), `GET /download_files` (a zip).
 * Differences from OpenHands, on purpose: client mistakes are 4xx with their own
 * status (OpenHands wraps them in 500 "400: ..."), and a single file downloads as
 * a zip holding that file (OpenHands sends an empty zip).
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { randomUUID } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, isAbsolute, join } from "node:path"
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
      const parts = yield* request.multipart.pipe(
        Effect.mapError((e) => new BadRequest(400, `Cannot read the multipart upload: ${e.message}`))
      )
      const file = (parts["file"] ?? []) as ReadonlyArray<unknown>
      const upload = file[0]
      if (!Multipart.isPersistedFile(upload)) {
        return yield* Effect.fail(new BadRequest(400, "The upload needs a multipart file field named \"file\"."))
      }
      const filename = basename(upload.name)
      yield* executor.upload({ source: upload.path, filename, destination, recursive }).pipe(
        Effect.mapError((e) => new BadRequest(400, e.message))
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
      // The zip is read into the response and deleted at once, so nothing is left behind.
      const bytes = yield* executor.download(path, zip).pipe(
        Effect.mapError((e) => new BadRequest(e.message.startsWith("File not found") ? 404 : 400, e.message)),
        Effect.map(() => readFileSync(zip)),
        Effect.ensuring(Effect.sync(() => rmSync(zip, { force: true })))
      )
      return HttpServerResponse.uint8Array(bytes, {
        contentType: "application/zip",
        headers: { "content-disposition": attachment(`${basename(path) || "root"}.zip`) }
      })
    }).pipe(Effect.catch(failed))
  )
}))
