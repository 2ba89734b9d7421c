/**
 * What the E2B tests share: the runtime image as the stand-in's `effect-sandbox-runtime` template
 * (built like the Docker tests' runtime image, from the base image, for E2B's user `user`, uid
 * 1000), a stock template with the base image alone (no payload, no Node), and E2BRuntime options
 * pointing the real SDK at a stand-in through its own connection options.
 */
import { afterAll, afterEach, assert, beforeAll } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { spawnSync } from "node:child_process"
import { E2BRuntime, type E2BRuntimeOptions } from "../../../src/e2b.ts"
import type { RuntimeShape } from "../../../src/index.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { baseImage } from "../../docker/infra.ts"
import { runtimeImageFor } from "../runtimeImages.ts"
import { type Standin, type StandinOptions, startStandin } from "./server.ts"

export const API_KEY = "e2b_standin_test_key"

/** The runtime image for E2B's user (built once, then found by its tag). */
export const runtimeImage = (): Promise<string> => runtimeImageFor(baseImage(), 1000, "user")

/**
 * A stock template with Node on its PATH but no payload (the upload fallback's case): the runtime
 * image with its Node moved to /usr/local/bin and /opt/effect-sandbox removed. Tagged by the
 * runtime image's tag, so it is built once per runtime image.
 */
export const nodeOnlyImage = (runtime: string): string => {
  const tag = `effect-sandbox-test/e2b-node-only:${runtime.split(":").at(-1)}`
  if (spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0) return tag
  const dockerfile =
    `FROM ${runtime}\nUSER root\nRUN mv /opt/effect-sandbox/bin/node /usr/local/bin/node && rm -rf /opt/effect-sandbox\n`
  const built = spawnSync("docker", ["build", "-q", "-t", tag, "-"], { input: dockerfile, encoding: "utf8" })
  if (built.status !== 0) throw new Error(`Cannot build ${tag}: ${built.stderr}`)
  return tag
}

/** The stand-in's templates: ours (the runtime image), `node-only`, and `base` (a stock image without payload or Node). */
export const templates = (image: string): StandinOptions["templates"] => ({
  "effect-sandbox-runtime": { image, user: "user", memoryMB: 2048 },
  "node-only": { image: nodeOnlyImage(image), user: "user", memoryMB: 2048 },
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

/** Run `use` on a runtime in a fresh sandbox of `on`, then release it: no container of `on` may remain. */
export const inSandbox = <A, E>(
  on: Standin,
  options: E2BRuntimeOptions,
  use: (rt: RuntimeShape) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const { rt, release } = yield* buildRuntime(E2BRuntime.layer(standinOptions(on, options)))
    const result = yield* use(rt)
    yield* release
    assert.deepStrictEqual(yield* Effect.promise(() => on.containers()), [])
    return result
  })

/**
 * The SDK's connection options for `standin`, as another client of the account would use them (its
 * URL options are internal in its types, hence not a literal at the call).
 */
export const sdkOptions = (standin: Standin) => ({ apiKey: API_KEY, apiUrl: standin.url, sandboxUrl: standin.url })

/**
 * A stand-in for the tests of one `describe`: started before them (the runtime image built first,
 * a minute on a busy machine), its faults dropped after each (a failed case leaves none to the
 * next), closed after them, with none of its sandboxes' containers left.
 */
export const suiteStandin = (options: Partial<StandinOptions> = {}): () => Standin => {
  let standin: Standin | undefined
  beforeAll(async () => {
    standin = await startStandin({ apiKey: API_KEY, templates: templates(await runtimeImage()), ...options })
  }, 300_000)
  afterEach(() => standin?.faults.clear())
  afterAll(async () => {
    const left = await standin!.containers()
    await standin!.close()
    assert.deepStrictEqual(left, [])
  })
  return () => standin!
}
