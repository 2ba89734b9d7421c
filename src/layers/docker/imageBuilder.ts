/**
 * Builds the runtime image: any base image with a glibc userland, plus the
 * action server payload and a Node binary under /opt/effect-sandbox. The tag is
 * a hash of (base image id, payload hash, Node version, build options), so an
 * unchanged input is never rebuilt. Builds go through the Engine API (`/build`,
 * no buildx needed); the build log goes to the Effect logger.
 */
import { Cause, Context, Effect, Layer, Queue, Stream } from "effect"
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { pack } from "tar-stream"
import { payloadDirectory, type PayloadManifest, readManifest } from "../../runtime/payload.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { dockerClient } from "./client.ts"
import { DockerEngine, engineCall } from "./engine.ts"
import { type ImageRequirements, PREFLIGHT_MARK, preflightScript } from "./preflight.ts"

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
/** Every runtime image carries its own tag under this label (found again when the tag moves on). */
const TAG_LABEL = "effect-sandbox.runtime-image"

/** The build context: Dockerfile, preflight script, Node binary and payload. */
const buildContext = (
  baseImageId: string,
  payload: string,
  manifest: PayloadManifest,
  options: ImageOptions,
  tag: string
) => {
  const tar = pack()
  const file = (name: string, content: Buffer | string, mode = 0o644) => tar.entry({ name, mode }, content)
  file(
    "Dockerfile",
    [
      `FROM ${baseImageId}`,
      // Node and the payload first: runtime images that differ only in their preflight share these layers.
      "COPY opt/bin /opt/effect-sandbox/bin",
      "COPY opt/payload /opt/effect-sandbox/payload",
      "COPY opt/preflight.sh /opt/effect-sandbox/preflight.sh",
      "USER root",
      "RUN /bin/sh /opt/effect-sandbox/preflight.sh",
      `LABEL ${TAG_LABEL}="${tag}"`,
      ""
    ].join("\n")
  )
  file("opt/preflight.sh", preflightScript(options.userId, options.username, options.requires), 0o755)
  file("opt/bin/node", readFileSync(process.execPath), 0o755)
  for (const name of manifest.files) {
    const path = join(payload, name)
    file(`opt/payload/${name}`, readFileSync(path), statSync(path).mode & 0o777)
  }
  tar.finalize()
  // A streamx Readable: it pipes into dockerode's request like a Node stream.
  return tar as unknown as NodeJS.ReadableStream
}

interface BuildEvent {
  readonly stream?: string
  readonly error?: string
}

/** The requirements as part of the tag (nothing when none, so such tags do not change). */
const requirementKey = (requires: ImageRequirements = {}): Array<string | boolean> =>
  requires.ipythonPython === undefined && requires.chromium !== true
    ? []
    : [requires.ipythonPython ?? "", requires.chromium === true]

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
    const hash = createHash("sha256")
      .update(JSON.stringify([
        base.Id,
        manifest.hash,
        process.version,
        options.userId,
        options.username,
        ...requirementKey(options.requires)
      ]))
      .digest("hex")
      .slice(0, 16)
    const tag = `${RUNTIME_IMAGE_REPOSITORY}:${hash}`
    const exists = yield* Effect.promise(() =>
      docker.getImage(tag).inspect().then(() => true, () => false)
    )
    if (exists && options.forceRebuild !== true) return tag

    yield* onBuildStart
    yield* Effect.logInfo(`building runtime image ${tag} from ${options.baseImage}`)
    const output = yield* engineCall("start the image build", () =>
      docker.buildImage(buildContext(base.Id, payload, manifest, options, tag), { t: tag, rm: true, forcerm: true }))
    const log: Array<string> = []
    yield* Stream.callback<BuildEvent, RuntimeStartError>((queue) =>
      Effect.sync(() =>
        docker.modem.followProgress(
          output,
          (error) =>
            error
              ? Queue.failCauseUnsafe(
                queue,
                Cause.fail(new RuntimeStartError({ message: `Docker: image build failed: ${error.message}` }))
              )
              : Queue.endUnsafe(queue),
          (event: BuildEvent) =>
            Queue.offerUnsafe(queue, event)
        )
      )
    ).pipe(
      Stream.runForEach((event) =>
        Effect.gen(function*() {
          if (event.stream !== undefined && event.stream.trim() !== "") {
            log.push(event.stream.trimEnd())
            yield* Effect.logDebug(`[image build] ${event.stream.trimEnd()}`)
          }
          if (event.error !== undefined) {
            const preflight = log.find((line) => line.includes(PREFLIGHT_MARK) && !line.endsWith("ok"))
            return yield* new RuntimeStartError({
              message: preflight === undefined
                ? `Docker: building ${tag} failed: ${event.error}\n${log.slice(-15).join("\n")}`
                : `The base image ${options.baseImage} cannot host the sandbox: ${
                  preflight.slice(preflight.indexOf(PREFLIGHT_MARK) + PREFLIGHT_MARK.length).trim()
                }`
            })
          }
        })
      )
    )
    yield* removeSupersededBuilds(tag)
    return tag
  })

/**
 * Two builds of one tag at once (two processes starting their first runtime on a fresh engine)
 * both finish, and the later one takes the tag: the earlier image stays behind, untagged but
 * still labelled with the tag. Such images are removed after each build; one a container still
 * runs on is refused by the engine and left for a later build to remove.
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
