/**
 * Runtime images the providers' stand-ins run, made by ImageBuilder as DockerRuntime makes them
 * (built once, then found by their tags): from the base image for a provider's own user, or the
 * tools image for uid 1000 `openhands` (with code-server; the remote VS Code tests use it too),
 * shared by every stand-in whose user may be that one, so no provider costs another build of it.
 */
import { Effect } from "effect"
import { DockerEngine, ImageBuilder } from "../../src/docker.ts"
import { toolsImage } from "../docker/infra.ts"

/** The runtime image of `baseImage` for `username` (uid `userId`). */
export const runtimeImageFor = (baseImage: string, userId: number, username: string): Promise<string> =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* (yield* ImageBuilder).ensure({ baseImage, userId, username })
    }).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer))
  )

/** The tools image for uid 1000 `openhands` (Daytona's default user; the providers' users are uid 1000). */
export const toolsRuntimeImage = (): Promise<string> => runtimeImageFor(toolsImage(), 1000, "openhands")
