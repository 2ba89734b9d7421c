/**
 * A runtime image for a remote runtime, built by the runtime API (spec §14, OpenHands'
 * `RemoteRuntimeBuilder`): named under the API's registry (`/registry_prefix`), built only when
 * the API does not have it (`/image_exists`) from the same context the local ImageBuilder uses,
 * sent gzipped and base64-encoded to `/build`, then followed through `/build_status`.
 */
import { Duration, Effect, type Schedule } from "effect"
import { gzipSync } from "node:zlib"
import { buildContext, type ImageContextOptions, runtimeImageHash } from "../../runtimeImage/imageContext.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { payloadDirectory, readManifest } from "../../serverStart/payload.ts"
import type { ProvisionStatus } from "../../services/Provisioner.ts"
import type { RuntimeApi } from "./api.ts"

/** Statuses of a build that ended without an image (OpenHands' list). */
const FAILED = new Set(["FAILURE", "INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED"])

export interface RemoteImageOptions extends ImageContextOptions {
  readonly baseImage: string
  /**
   * `POST /build` still refused 429 once `providerRetry` gave up: the builder is busy for longer,
   * and OpenHands waits on (30 s at a time) within the build's budget.
   */
  readonly busySchedule: Schedule.Schedule<unknown>
  readonly statusSchedule: Schedule.Schedule<unknown>
  readonly timeout: Duration.Duration
}

/** The build is still running: poll again. */
class Building {
  readonly _tag = "Building"
}

/** The context as `/build` takes it: a gzipped tar, base64-encoded. */
const encodedContext = async (from: string, payload: string, options: ImageContextOptions, tag: string) => {
  const chunks: Array<Uint8Array> = []
  for await (const chunk of buildContext(from, payload, readManifest(payload), options, tag)) {
    chunks.push(chunk as Uint8Array)
  }
  return gzipSync(Buffer.concat(chunks)).toString("base64")
}

/** Follow build `buildId` to its image, failing with the API's error for a failed build. */
const awaitBuild = (api: RuntimeApi, buildId: string, options: RemoteImageOptions) =>
  api.buildStatus(buildId).pipe(
    Effect.flatMap((answer): Effect.Effect<string, Building | RuntimeStartError> => {
      if (answer.status === "SUCCESS" && answer.image !== undefined) return Effect.succeed(answer.image)
      if (FAILED.has(answer.status)) {
        return Effect.fail(
          new RuntimeStartError({
            message: answer.error ?? `Build failed with status: ${answer.status}. Build ID: ${buildId}`
          })
        )
      }
      return Effect.fail(new Building())
    }),
    Effect.retry({ schedule: options.statusSchedule, while: (e) => e instanceof Building }),
    Effect.timeoutOrElse({ duration: options.timeout, orElse: () => Effect.fail(new Building()) }),
    Effect.catch((e) =>
      Effect.fail(
        e instanceof Building
          ? new RuntimeStartError({
            message: `Build timed out after ${Duration.toMinutes(options.timeout)} minutes`
          })
          : e
      )
    )
  )

/** The image to start: the API's own when it has it, else built now (BUILDING_RUNTIME meanwhile). */
export const remoteRuntimeImage = Effect.fn("RemoteRuntime.remoteRuntimeImage")(function*(
  api: RuntimeApi,
  options: RemoteImageOptions,
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) {
  const prefix = yield* api.registryPrefix
  const payload = yield* payloadDirectory
  const image = `${prefix.registry_prefix.replace(/\/+$/, "")}/runtime:${
    runtimeImageHash(options.baseImage, readManifest(payload), options)
  }`
  const exists = yield* api.imageExists(image)
  if (exists.exists) return image
  yield* onStatus("BUILDING_RUNTIME")
  yield* Effect.logInfo(`building runtime image ${image} from ${options.baseImage} through the runtime API`)
  const context = yield* Effect.tryPromise({
    try: () => encodedContext(options.baseImage, payload, options, image),
    catch: (cause) => new RuntimeStartError({ message: `Cannot pack the build context: ${String(cause)}` })
  })
  const form = new FormData()
  form.append("context", new Blob([context]), "context.tar.gz")
  form.append("target_image", image)
  const { build_id } = yield* api.build(form).pipe(
    Effect.retry({ schedule: options.busySchedule, while: (error) => error.reason === "rate-limited" }),
    Effect.timeoutOrElse({
      duration: options.timeout,
      orElse: () =>
        Effect.fail(
          new RuntimeStartError({
            message: `The runtime API's builder stayed busy for ${Duration.toMinutes(options.timeout)} minutes`
          })
        )
    })
  )
  const built = yield* awaitBuild(api, build_id, options)
  const ready = yield* api.imageExists(built)
  if (!ready.exists) return yield* new RuntimeStartError({ message: `Container image ${built} does not exist` })
  return built
})
