/**
 * Builds the runtime image: any base image with a glibc userland, plus the
 * action server payload and a Node binary under /opt/effect-sandbox. The tag is
 * a hash of (base image id, payload hash, Node version, build options), so an
 * unchanged input is never rebuilt. Builds go through the Engine API (`/build`,
 * no buildx needed); the build log goes to the Effect logger.
 */
import { Context, Effect, Layer } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { buildContext, runtimeImageHash, TAG_LABEL } from "../internal/imageContext.ts"
import { type Manifest, payloadDirectory, readManifest } from "../internal/payload.ts"
import { withBuildLock } from "./buildLock.ts"
import { dockerClient } from "./client.ts"
import { DockerEngine, engineCall } from "./engine.ts"
import { engineBuild } from "./engineBuild.ts"
import { type ImageRequirements, PREFLIGHT_MARK } from "./preflight.ts"

export interface ImageOptions {
  /** Any image with a glibc userland (see docs/image-contract.md). */
  readonly baseImage: string
  /** The uid (and name) of the user the sandbox runs as; created if the image lacks it. */
  readonly userId: number
  readonly username: string
  readonly forceRebuild?: boolean
  /** What the runtime's tools need from the image (checked by the preflight; part of the tag). */
  readonly requires?: ImageRequirements
}

export const RUNTIME_IMAGE_REPOSITORY = "effect-sandbox-runtime"

/** The image tag for `options`, building it when it does not exist (or when forced). */
const ensureRuntimeImage = (
  options: ImageOptions,
  onBuildStart: Effect.Effect<void> = Effect.void
): Effect.Effect<string, RuntimeStartError, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const base = yield* engineCall(`inspect the base image ${options.baseImage}`, () =>
      docker.getImage(options.baseImage).inspect()).pipe(
        Effect.mapError(() =>
          new RuntimeStartError({
            message:
              `The base image ${options.baseImage} is not on this engine: pull it (docker pull ${options.baseImage}) or choose another; any glibc image with bash will do (debian:bookworm, ubuntu:24.04, python:3.12, ...).`
          })
        )
      )
    const payload = yield* payloadDirectory
    const manifest = readManifest(payload)
    const tag = `${RUNTIME_IMAGE_REPOSITORY}:${runtimeImageHash(base.Id, manifest, options)}`
    const exists = Effect.promise(() =>
      docker.getImage(tag).inspect().then(() => true, () => false)
    )
    if ((yield* exists) && options.forceRebuild !== true) return tag
    return yield* withBuildLock(tag)(Effect.gen(function*() {
      // Built by another process while this one waited for the lock.
      if ((yield* exists) && options.forceRebuild !== true) return tag
      return yield* buildImage(base.Id, payload, manifest, options, tag, onBuildStart)
    }))
  })

/** Build `tag` (holding its build lock), then remove what an earlier build of it left. */
const buildImage = (
  baseId: string,
  payload: string,
  manifest: Manifest,
  options: ImageOptions,
  tag: string,
  onBuildStart: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    yield* onBuildStart
    yield* Effect.logInfo(`building runtime image ${tag} from ${options.baseImage}`)
    yield* engineBuild(buildContext(baseId, payload, manifest, options, tag) as unknown as NodeJS.ReadableStream, tag)
      .pipe(
        Effect.catchTag("BuildFailed", ({ error, log }) => {
          const preflight = log.find((line) => line.includes(PREFLIGHT_MARK) && !line.endsWith("ok"))
          return Effect.fail(
            new RuntimeStartError({
              message: preflight === undefined
                ? `Docker: building ${tag} failed: ${error}\n${log.slice(-15).join("\n")}`
                : `The base image ${options.baseImage} cannot host the sandbox: ${
                  preflight.slice(preflight.indexOf(PREFLIGHT_MARK) + PREFLIGHT_MARK.length).trim()
                }`
            })
          )
        })
      )
    yield* removeSupersededBuilds(tag)
    return tag
  })

/**
 * A forced rebuild (or a build of the tag from another machine sharing the engine) takes the tag
 * from the earlier image, which stays behind untagged but still labelled with the tag. Such images
 * are removed after each build; one a container still runs on is refused by the engine and left
 * for a later build to remove. Builds of one machine never race for a tag (buildLock.ts).
 */
const removeSupersededBuilds = Effect.fn("ImageBuilder.removeSupersededBuilds")(function*(tag: string) {
  const docker = yield* dockerClient
  const superseded = yield* Effect.promise(() =>
    docker.listImages({ filters: { label: [`${TAG_LABEL}=${tag}`], dangling: ["true"] } }).catch(() => [])
  )
  for (const image of superseded) {
    yield* Effect.promise(() => docker.getImage(image.Id).remove().catch(() => undefined))
  }
})

/**
 * The image builder, as a service: DockerRuntime asks it for an image, so a
 * different builder (a remote one, a registry lookup) can be provided instead.
 */
export class ImageBuilder extends Context.Service<ImageBuilder, {
  /** The runtime image's tag, built first when missing; `onBuildStart` runs only when a build starts. */
  readonly ensure: (
    options: ImageOptions,
    onBuildStart?: Effect.Effect<void>
  ) => Effect.Effect<string, RuntimeStartError>
}>()("effect-sandbox/ImageBuilder") {
  /** Builds through the Engine API of the `DockerEngine` in context. */
  static readonly layer: Layer.Layer<ImageBuilder, never, DockerEngine> = Layer.effect(
    ImageBuilder,
    Effect.gen(function*() {
      const engine = yield* DockerEngine
      return ImageBuilder.of({
        ensure: (options, onBuildStart) =>
          ensureRuntimeImage(options, onBuildStart).pipe(Effect.provideService(DockerEngine, engine))
      })
    })
  )
}
