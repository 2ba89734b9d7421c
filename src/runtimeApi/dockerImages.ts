/**
 * The build endpoints on a Docker engine: images are the engine's own (`/image_exists` inspects
 * it), builds run on the engine (`engines/docker/engineBuild.ts`) in the background while the client polls.
 *
 * A build is confined, because an API key is all its author has: it tags only under the registry
 * prefix and never over a tag `/build` did not make (buildTags.ts; checked when asked and again
 * before tagging, the image being built untagged), its Dockerfile may not make the engine fetch
 * anything from the host's network (dockerfileCheck.ts), its steps run with the server's build limits
 * (memory, CPU, network, nproc; engineBuild.ts), a time limit stops it on the engine, and at most
 * `concurrency` run at once with as many waiting (more are a 429, which OpenHands' client re-sends
 * after 30 s), so one hung build holds one slot until its time limit, never the others.
 *
 * Build states live in this process: a restart forgets builds under way, whose ids then read as
 * unknown (404), and OpenHands' client fails that build, not the session.
 */
import type Docker from "dockerode"
import { Duration, Effect, FiberSet, Layer, Semaphore } from "effect"
import { randomBytes } from "node:crypto"
import { dockerClient } from "../engines/docker/client.ts"
import { DockerEngine, engineCall } from "../engines/docker/engine.ts"
import { type BuildLimits, engineBuild } from "../engines/docker/engineBuild.ts"
import { API_TAGS_LABEL, madeByApi, notOurs, refusedTag, splitReference } from "./buildTags.ts"
import { removeOrphanContexts } from "./contextFiles.ts"
import { checkDockerfile } from "./dockerfileCheck.ts"
import { ApiError } from "./errors.ts"
import { type BuildState, Images, type UploadedContext } from "./images.ts"
import { unpackedContext } from "./unpackedContext.ts"

/** Finished builds `/build_status` remembers; the oldest beyond this many read as unknown (404). */
const REMEMBERED_BUILDS = 1000

export interface DockerImagesOptions {
  readonly registryPrefix: string
  readonly maxUploadBytes: number
  readonly limits: BuildLimits
  /** Builds running at once (as many more may wait). */
  readonly concurrency: number
  /** How long one build may run once started. */
  readonly timeout: Duration.Duration
}

export const dockerImages = (options: DockerImagesOptions): Layer.Layer<Images, never, DockerEngine> =>
  Layer.effect(
    Images,
    Effect.gen(function*() {
      const docker = yield* dockerClient
      const engine = yield* DockerEngine
      yield* Effect.sync(removeOrphanContexts)
      const builds = new Map<string, BuildState>()
      const slots = yield* Semaphore.make(options.concurrency)
      let admitted = 0
      // Builds under way belong to the server: stopping it interrupts them.
      const running = yield* FiberSet.make()

      /** Record how build `id` ended, forgetting the oldest finished builds beyond the bound. */
      const finish = (id: string, state: BuildState) =>
        Effect.sync(() => {
          builds.set(id, state)
          for (const [old, { status }] of builds) {
            if (builds.size <= REMEMBERED_BUILDS) break
            if (status !== "RUNNING") builds.delete(old)
          }
        })

      const inspect = (image: string) =>
        Effect.promise(() =>
          docker.getImage(image).inspect().catch((): Docker.ImageInspectInfo | undefined => undefined)
        )

      /** The images now under `tags` (by tag), failing with the first tag `/build` may not write. */
      const writable = Effect.fn("dockerImages.writable")(function*(tags: ReadonlyArray<string>) {
        const held = new Map<string, string>()
        for (const tag of tags) {
          const refused = refusedTag(options.registryPrefix, tag)
          if (refused !== undefined) return yield* refused
          const image = yield* inspect(tag)
          if (image === undefined) continue
          if (!madeByApi(image.Config.Labels, tag)) return yield* notOurs(tag)
          held.set(tag, image.Id)
        }
        return held
      })

      /** Remove an image no tag names any more (an earlier build's, or this one's when refused). */
      const removeIfUntagged = (id: string) =>
        Effect.gen(function*() {
          const image = yield* inspect(id)
          if (image !== undefined && (image.RepoTags ?? []).length === 0) {
            yield* Effect.promise(() => docker.getImage(id).remove().catch(() => undefined))
          }
        })

      /** Tag the built image, checking every tag again first (another build may have taken one). */
      const tagBuilt = Effect.fn("dockerImages.tagBuilt")(function*(imageId: string, tags: ReadonlyArray<string>) {
        const held = yield* writable(tags).pipe(Effect.tapError(() => removeIfUntagged(imageId)))
        for (const tag of tags) {
          yield* engineCall(`tag the built image as ${tag}`, () => docker.getImage(imageId).tag(splitReference(tag)))
        }
        for (const previous of new Set(held.values())) if (previous !== imageId) yield* removeIfUntagged(previous)
      })

      const runBuild = (id: string, context: UploadedContext, tags: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          yield* checkDockerfile(context, options.maxUploadBytes)
          const unpacked = unpackedContext(context, options.maxUploadBytes)
          const { imageId } = yield* engineBuild(unpacked.stream, {
            labels: { [API_TAGS_LABEL]: tags.join(" ") },
            limits: options.limits
          }).pipe(Effect.mapError(unpacked.explain))
          yield* tagBuilt(imageId, tags)
          yield* finish(id, { status: "SUCCESS", image: tags[0]! })
        }).pipe(
          Effect.timeoutOrElse({
            duration: options.timeout,
            orElse: () =>
              finish(id, {
                status: "TIMEOUT",
                error: `The build ran longer than this server's limit of ${
                  Duration.toSeconds(options.timeout)
                } s and was stopped`
              })
          }),
          slots.withPermits(1),
          Effect.catchTags({
            BuildFailed: ({ error, log }) =>
              finish(id, { status: "FAILURE", error: [error, ...log.slice(-15)].join("\n") }),
            // The engine refused a call (ProviderError), or the build's stream broke.
            ProviderError: ({ message }) => finish(id, { status: "INTERNAL_ERROR", error: message }),
            RuntimeStartError: ({ message }) => finish(id, { status: "INTERNAL_ERROR", error: message }),
            // A tag taken by an image /build did not make while this one built.
            ApiError: ({ detail }) => finish(id, { status: "FAILURE", error: detail })
          }),
          Effect.ensuring(Effect.andThen(context.remove, Effect.sync(() => admitted--))),
          Effect.provideService(DockerEngine, engine)
        )

      const start = Effect.fn("dockerImages.build")(function*(context: UploadedContext, tags: ReadonlyArray<string>) {
        if (tags.length === 0) return yield* new ApiError({ status: 400, detail: "A build needs target_image" })
        if (admitted >= 2 * options.concurrency) {
          return yield* new ApiError({
            status: 429,
            detail:
              `${options.concurrency} builds are running and ${options.concurrency} waiting, this server's limit: retry later`
          })
        }
        // Counted before the tags are checked, so requests checked side by side cannot pass the bound.
        admitted++
        yield* writable(tags).pipe(Effect.onError(() => Effect.sync(() => admitted--)))
        const id = `build-${randomBytes(12).toString("hex")}`
        builds.set(id, { status: "RUNNING" })
        yield* FiberSet.run(running, runBuild(id, context, tags))
        return id
      })

      return Images.of({
        registryPrefix: options.registryPrefix,
        maxUploadBytes: options.maxUploadBytes,
        info: (image) =>
          inspect(image).pipe(
            Effect.map((info) => info && { uploadTime: info.Created, sizeBytes: info.Size })
          ),
        build: (context, tags) => start(context, tags).pipe(Effect.onError(() => context.remove)),
        status: (id) => Effect.sync(() => builds.get(id))
      })
    })
  )
