/**
 * The build endpoints (spec §14): `/registry_prefix`, `/image_exists?image=`, `POST /build`
 * (multipart: `context` = base64 of a gzip tar of the build folder, as OpenHands' remote builder
 * sends it, `target_image`, repeated `tags`; read as it arrives by buildUpload.ts) and
 * `/build_status?build_id=`.
 */
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { readBuildUpload } from "./buildUpload.ts"
import { answerError, decodeAs, decodeQuery, json } from "./decode.ts"
import { ApiError } from "./errors.ts"
import { Images } from "./images.ts"
import { API_ENDPOINTS } from "./paths.ts"
import { BuildForm, BuildQuery, ImageQuery } from "./schemas.ts"

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
      const upload = yield* readBuildUpload(images.maxUploadBytes)
      const fields = yield* decodeAs(BuildForm, "build form")({
        target_image: upload.fields.get("target_image")?.[0],
        tags: upload.fields.get("tags") ?? []
      }).pipe(Effect.onError(() => upload.context.remove))
      const buildId = yield* images.build(upload.context, [fields.target_image, ...fields.tags])
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
