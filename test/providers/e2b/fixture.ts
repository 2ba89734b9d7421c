/**
 * What the E2B tests share: the runtime image as the stand-in's `effect-sandbox-runtime` template
 * (built like the Docker tests' runtime image, from the base image, for E2B's user `user`, uid
 * 1000), a stock template with the base image alone (no payload, no Node), and E2BRuntime options
 * pointing the real SDK at a stand-in through its own connection options.
 */
import { Effect, Redacted } from "effect"
import { DockerEngine, ImageBuilder } from "../../../src/docker.ts"
import type { E2BRuntimeOptions } from "../../../src/e2b.ts"
import { baseImage } from "../../docker/infra.ts"
import type { Standin, StandinOptions } from "./server.ts"

export const API_KEY = "e2b_standin_test_key"

/** The runtime image for E2B's user (built once, then found by its tag). */
export const runtimeImage = (): Promise<string> =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* (yield* ImageBuilder).ensure({ baseImage: baseImage(), userId: 1000, username: "user" })
    }).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer))
  )

/** The stand-in's templates: ours (the runtime image) and `base` (a stock image without payload or Node). */
export const templates = (image: string): StandinOptions["templates"] => ({
  "effect-sandbox-runtime": { image, user: "user", memoryMB: 2048 },
  base: { image: baseImage(), user: "root", memoryMB: 512 }
})

/** E2BRuntime options for the SDK against `standin`. */
export const standinOptions = (standin: Standin, options: E2BRuntimeOptions = {}): E2BRuntimeOptions => ({
  apiKey: Redacted.make(API_KEY),
  apiUrl: standin.url,
  sandboxUrl: standin.url,
  hostUrl: standin.hostUrl,
  ...options
})
