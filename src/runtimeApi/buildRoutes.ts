/**
 * The build endpoints (spec §14): `/registry_prefix`, `/image_exists?image=`, `POST /build`
 * (multipart: `context` = base64 of a gzip tar of the build folder, as OpenHands' remote builder
 * sends it, `target_image`, repeated `tags`) and `/build_status?build_id=`.
 */
import { ByteSize, Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerRequest } from "effect/http"
import { answerError, decodeAs, decodeQuery, json } from "./decode.ts"
import { ApiError } from "./errors.ts"
import { Images } from "./images.ts"
import { API_ENDPOINTS } from "./paths.ts"
import { BuildForm, BuildQuery, ImageQuery } from "./schemas.ts"

/** The largest `/build` body: a runtime image's build folder, base64-encoded, is tens of MB. */
const MAX_BUILD_BODY = ByteSize.mebibytes(512)

const GZIP_MAGIC = [0x1f, 0x8b]

/** The multipart form of a `/build` request, as the Fetch API parses it. */
const buildForm = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const bytes = yield* request.arrayBuffer.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, MAX_BUILD_BODY),
    Effect.mapError((error) =>
      new ApiError({
        status: error.reason._tag === "RequestParseError" ? 413 : 400,
        detail: `Cannot read the build request: ${error.message}`
      })
    )
  )
  return yield* Effect.tryPromise({
    try: () => new Response(bytes, { headers: { "content-type": request.headers["content-type"] ?? "" } }).formData(),
    catch: () =>
      new ApiError({
        status: 400,
        detail: "A build request is multipart/form-data with context, target_image and tags"
      })
  })
})

/** The `context` part: base64 text of a gzip tar (OpenHands' builder sends it as a file part). */
const contextOf = (form: FormData) =>
  Effect.gen(function*() {
    const part = form.get("context")
    const text = typeof part === "string" ? part : part === null ? undefined : yield* Effect.promise(() => part.text())
    const bytes = text === undefined ? undefined : Buffer.from(text, "base64")
    if (bytes === undefined || !GZIP_MAGIC.every((byte, i) => bytes[i] === byte)) {
      return yield* new ApiError({
        status: 400,
        detail: "The build context must be base64 of a gzip tar (context.tar.gz)"
      })
    }
    return new Uint8Array(bytes)
  })

export const buildRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const images = yield* Images
  yield* router.add(...API_ENDPOINTS.registryPrefix, json({ registry_prefix: images.registryPrefix }))
  yield* router.add(
    ...API_ENDPOINTS.imageExists,
    Effect.gen(function*() {
      const { image } = yield* decodeQuery(ImageQuery)
      const info = yield* images.info(image)
      return json(
        info === undefined
          ? { exists: false, image: null }
          : { exists: true, image: { upload_time: info.uploadTime, image_size_bytes: info.sizeBytes } }
      )
    }).pipe(Effect.catch(answerError))
  )
  yield* router.add(
    ...API_ENDPOINTS.build,
    Effect.gen(function*() {
      const form = yield* buildForm
      const fields = yield* decodeAs(BuildForm, "build form")({
        target_image: form.get("target_image"),
        tags: form.getAll("tags")
      })
      const context = yield* contextOf(form)
      const buildId = yield* images.build(context, [fields.target_image, ...fields.tags])
      return json({ build_id: buildId })
    }).pipe(Effect.catch(answerError))
  )
  yield* router.add(
    ...API_ENDPOINTS.buildStatus,
    Effect.gen(function*() {
      const { build_id } = yield* decodeQuery(BuildQuery)
      const state = yield* images.status(build_id)
      if (state === undefined) return yield* new ApiError({ status: 404, detail: `Build ${build_id} not found` })
      return json(state)
    }).pipe(Effect.catch(answerError))
  )
}))
