/**
 * Builds the runtime image: any base image with a glibc userland, plus the
 * action server payload and a Node binary under /opt/effect-sandbox. The tag is
 * a hash of (base image id, payload hash, Node version, build options), so an
 * unchanged input is never rebuilt. An image found under the tag is reused only
 * when it is one this builder made for it (its context label, its base's layers):
 * a tag moved to another image (by a `docker tag`, by a build someone else ran)
 * is built again, never run as the sandbox. Builds go through the Engine API
 * (`/build`, no buildx needed); the build log goes to the Effect logger, its steps to the start's
 * progress (services/StartProgress.ts). A base image the engine lacks is pulled first.
 */
import type Docker from "dockerode"
import { Context, Effect, Layer } from "effect"
import {
  buildContext,
  CONTEXT_LABEL,
  contextDigest,
  runtimeImageHash,
  TAG_LABEL
} from "../../runtimeImage/imageContext.ts"
import { type ImageRequirements, PREFLIGHT_MARK } from "../../runtimeImage/preflight.ts"
import { ProviderError, refusalAsStartError, RuntimeStartError } from "../../schema/errors.ts"
import { type Manifest, payloadDirectory, readManifest } from "../../serverStart/payload.ts"
import { reportStart } from "../../services/StartProgress.ts"
import { withBuildLock } from "./buildLock.ts"
import { dockerClient } from "./client.ts"
import { DockerEngine, engineCall } from "./engine.ts"
import { engineBuild } from "./engineBuild.ts"
import { pullImage } from "./pull.ts"

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
export const ensureRuntimeImage = (
  options: ImageOptions,
  onBuildStart: Effect.Effect<void> = Effect.void
): Effect.Effect<string, ProviderError | RuntimeStartError, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const base = yield* baseImageOf(options.baseImage)
    const payload = yield* payloadDirectory
    const manifest = readManifest(payload)
    const tag = `${RUNTIME_IMAGE_REPOSITORY}:${runtimeImageHash(base.Id, manifest, options)}`
    const digest = contextDigest(base.Id, manifest, options, tag)
    /** Whether the tag holds an image built for it; `warn` says so when it holds another. */
    const usable = (warn: boolean) =>
      Effect.gen(function*() {
        const image = yield* Effect.promise(() => docker.getImage(tag).inspect().catch(() => undefined))
        if (image === undefined) return false
        const foreign = foreignImage(image, base, tag, digest)
        if (foreign !== undefined && warn) {
          yield* Effect.logWarning(`runtime image ${tag} ${foreign}: building it again`)
        }
        return foreign === undefined
      })
    if (options.forceRebuild !== true && (yield* usable(true))) return tag
    return yield* withBuildLock(tag)(Effect.gen(function*() {
      // Built by another process while this one waited for the lock.
      if (options.forceRebuild !== true && (yield* usable(false))) return tag
      return yield* buildImage(base.Id, payload, manifest, options, tag, digest, onBuildStart)
    }))
  })

/** How many of the engine's images a missing base image's message names. */
const IMAGES_NAMED = 10

/** The tags of the engine's images a user could take as a base (not the runtime images built from them). */
const engineImages = Effect.gen(function*() {
  const docker = yield* dockerClient
  const images = yield* Effect.promise(() => docker.listImages().catch(() => []))
  return images.flatMap((image) => image.RepoTags ?? [])
    .filter((tag) => tag !== "<none>:<none>" && !tag.startsWith(`${RUNTIME_IMAGE_REPOSITORY}:`))
    .sort()
})

/**
 * The base image, pulled first when the engine lacks it (`docker run` would). One that cannot be
 * pulled (no registry, no such image) is a start error with the engine's refusal as data (reason
 * `image-missing`, its 404) that says which options choose another and which images the engine has.
 */
const baseImageOf = Effect.fn("ImageBuilder.baseImage")(function*(image: string) {
  const docker = yield* dockerClient
  const inspect = engineCall(`inspect the base image ${image}`, () => docker.getImage(image).inspect())
  const looked = yield* inspect.pipe(
    Effect.map((found) => ({ found })),
    Effect.catchIf((error) => error.reason === "not-found", (missing) => Effect.succeed({ missing }))
  )
  if ("found" in looked) return looked.found
  const { missing } = looked
  return yield* pullImage(image).pipe(
    Effect.andThen(inspect),
    Effect.catch((refusal) =>
      Effect.flatMap(engineImages, (images) =>
        Effect.fail(
          new RuntimeStartError({
            message:
              `The base image ${image} is not on this engine and could not be pulled (${refusal.message.trim()}). ` +
              "Choose another with --image (the CLI), baseImage (the runtime's options) or " +
              "SANDBOX_BASE_CONTAINER_IMAGE; any glibc image with bash will do. " +
              (images.length === 0
                ? "This engine has no images."
                : `This engine has: ${images.slice(0, IMAGES_NAMED).join(", ")}${
                  images.length > IMAGES_NAMED ? ` (and ${images.length - IMAGES_NAMED} more)` : ""
                }.`),
            reason: "provider",
            provider: new ProviderError({
              provider: missing.provider,
              operation: missing.operation,
              reason: "image-missing",
              ...(missing.status === undefined ? {} : { status: missing.status }),
              message: missing.message
            })
          })
        ))
    )
  )
})

/**
 * Why the image under `tag` is not one this builder made for it, or undefined when it is: it must
 * carry the tag's context digest (a label the engine sets from the build's options) and the base's
 * layers first. Labels can be forged by whoever can build on the engine (root-equivalent anyway);
 * this catches a tag moved to an image that was not built for it.
 */
const foreignImage = (
  image: Docker.ImageInspectInfo,
  base: Docker.ImageInspectInfo,
  tag: string,
  digest: string
): string | undefined => {
  const labels = image.Config.Labels ?? {}
  if (labels[TAG_LABEL] !== tag || labels[CONTEXT_LABEL] !== digest) return "is not labelled as built from its context"
  const layers = image.RootFS.Layers ?? []
  const baseLayers = base.RootFS.Layers ?? []
  return baseLayers.every((layer, i) => layers[i] === layer) ? undefined : "is not built on its base image"
}

/** Build `tag` (holding its build lock), then remove what an earlier build of it left. */
const buildImage = (
  baseId: string,
  payload: string,
  manifest: Manifest,
  options: ImageOptions,
  tag: string,
  digest: string,
  onBuildStart: Effect.Effect<void>
) =>
  Effect.gen(function*() {
    yield* onBuildStart
    yield* Effect.logInfo(`building runtime image ${tag} from ${options.baseImage}`)
    // The engine starts the first step once it has the whole context (Node and the payload), seconds later.
    yield* reportStart({ phase: "building-image", detail: `${tag}: sending the build context` })
    yield* engineBuild(buildContext(baseId, payload, manifest, options, tag) as unknown as NodeJS.ReadableStream, {
      tag,
      labels: { [CONTEXT_LABEL]: digest }
    })
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
          ensureRuntimeImage(options, onBuildStart).pipe(
            Effect.mapError(refusalAsStartError),
            Effect.provideService(DockerEngine, engine)
          )
      })
    })
  )
}
