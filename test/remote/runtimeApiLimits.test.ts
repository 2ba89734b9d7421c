/**
 * The runtime API's Docker backend checks its sandboxes' limits by DockerRuntime's rules
 * (`checkDockerOptions`) before anything starts: bad server options fail the backend with one
 * `InvalidOptionsError` line, and a `resource_factor` whose limits Docker would refuse is a 400
 * naming them, with no image built and no container made (the engine's own 400 came half-way
 * through a start before).
 */
import { assert, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { ImageBuilder } from "../../src/engines/docker/imageBuilder.ts"
import { dockerSandboxes, type DockerSandboxesOptions } from "../../src/runtimeApi/dockerSandboxes.ts"
import { Sandboxes } from "../../src/runtimeApi/sandboxes.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import { sessionContainers } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { newSessionId, PREFIX } from "./apiServer.ts"

const backend = (options: Omit<DockerSandboxesOptions, "sandbox">) =>
  dockerSandboxes({ sandbox: new SandboxConfig({}), containerNamePrefix: PREFIX, ...options }).pipe(
    Layer.provide(ImageBuilder.layer),
    Layer.provide(DockerEngine.layer)
  )

describeDocker("the runtime API's Docker limits", () => {
  it.live("bad server options fail the backend with one line naming each", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Layer.build(backend({ cpus: 0.001, containerNamePrefix: "-bad" })))
      assert.strictEqual(failure._tag, "InvalidOptionsError")
      assert.strictEqual(
        failure.message,
        "Invalid runtime API options: cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit); " +
          "containerNamePrefix: Expected a container name's start (a letter or digit, then letters, digits, _ . -)"
      )
    }).pipe(Effect.scoped))

  it.live("a resource_factor whose limits Docker refuses is a 400 that starts nothing", () =>
    Effect.gen(function*() {
      const api = Context.get(yield* Layer.build(backend({ memoryBytes: 64 * 1024 * 1024 })), Sandboxes)
      const session = newSessionId()
      const refused = yield* Effect.flip(api.start({ session_id: session, resource_factor: 0.001 }))
      assert.deepStrictEqual({ status: refused.status, detail: refused.detail }, {
        status: 400,
        detail: "Invalid limits for resource_factor 0.001: memoryMiB: Expected at least 6 (Docker's smallest " +
          "limit); cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"
      })
      assert.deepStrictEqual(sessionContainers(session), [])
      assert.deepStrictEqual(yield* api.list, [])
    }).pipe(Effect.scoped))
})
