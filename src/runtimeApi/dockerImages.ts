/**
 * The build endpoints on a Docker engine: images are the engine's own (`/image_exists` inspects
 * it), builds run on the engine (`docker/engineBuild.ts`) in the background, one at a time (a
 * build takes the engine's CPUs; more at once only slows each), while the client polls. Build
 * states live in this process: a restart forgets builds under way, whose ids then read as unknown
 * (404), and OpenHands' client fails that build, not the session.
 */
import { Effect, FiberSet, Layer, Semaphore } from "effect"
import { randomBytes } from "node:crypto"
import { dockerClient } from "../layers/docker/client.ts"
import { DockerEngine, engineCall } from "../layers/docker/engine.ts"
import { engineBuild } from "../layers/docker/engineBuild.ts"
import { ApiError } from "./errors.ts"
import { type BuildState, Images } from "./images.ts"

/** `repo[:tag]` split at the tag's colon (a registry's port colon comes before the last `/`). */
const splitReference = (reference: string) => {
  const colon = reference.lastIndexOf(":")
  return colon > reference.lastIndexOf("/") ? { repo: reference.slice(0, colon), tag: reference.slice(colon + 1) } : {
    repo: reference,
    tag: "latest"
  }
}

export const dockerImages = (registryPrefix: string): Layer.Layer<Images, never, DockerEngine> =>
  Layer.effect(
    Images,
    Effect.gen(function*() {
      const docker = yield* dockerClient
      const engine = yield* DockerEngine
      const builds = new Map<string, BuildState>()
      const oneAtATime = yield* Semaphore.make(1)
      // Builds under way belong to the server: stopping it interrupts them.
      const running = yield* FiberSet.make()

      const runBuild = (id: string, context: Uint8Array, tags: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const [target, ...others] = tags as [string, ...Array<string>]
          yield* engineBuild(Buffer.from(context), target)
          for (const other of others) {
            yield* engineCall(`tag ${target} as ${other}`, () => docker.getImage(target).tag(splitReference(other)))
          }
          builds.set(id, { status: "SUCCESS", image: target })
        }).pipe(
          oneAtATime.withPermits(1),
          Effect.catchTags({
            BuildFailed: ({ error, log }) =>
              Effect.sync(() => builds.set(id, { status: "FAILURE", error: [error, ...log.slice(-15)].join("\n") })),
            RuntimeStartError: ({ message }) =>
              Effect.sync(() => builds.set(id, { status: "INTERNAL_ERROR", error: message }))
          }),
          Effect.provideService(DockerEngine, engine)
        )

      return Images.of({
        registryPrefix,
        info: (image) =>
          Effect.promise(() =>
            docker.getImage(image).inspect().then(
              (info) => ({ uploadTime: info.Created, sizeBytes: info.Size }),
              () => undefined
            )
          ),
        build: (context, tags) =>
          Effect.gen(function*() {
            if (tags.length === 0) return yield* new ApiError({ status: 400, detail: "A build needs target_image" })
            const id = `build-${randomBytes(12).toString("hex")}`
            builds.set(id, { status: "RUNNING" })
            yield* FiberSet.run(running, runBuild(id, context, tags))
            return id
          }),
        status: (id) => Effect.sync(() => builds.get(id))
      })
    })
  )
