import { assert, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { DockerRuntime } from "../../src/docker.ts"
import { Runtime } from "../../src/index.ts"
import { baseImage, containersWithLabel, describeDocker } from "./infra.ts"

describeDocker("DockerRuntime warm pool", () => {
  const image = baseImage()

  it.live(
    "hands out ready containers, never reuses them, refills, and removes idle ones on release",
    () =>
      Effect.gen(function*() {
        const poolScope = yield* Scope.make()
        const pool = yield* Layer.buildWithScope(
          DockerRuntime.layerPool({ baseImage: image, poolSize: 2, noChangeTimeoutSeconds: 1 }),
          poolScope
        )
        const warm = DockerRuntime.layerWarm().pipe(Layer.provide(Layer.succeedContext(pool)))
        const take = Effect.gen(function*() {
          const scope = yield* Scope.make()
          const rt = Context.get(yield* Layer.buildWithScope(warm, scope), Runtime)
          return { rt, release: Scope.close(scope, Exit.void) }
        })
        const first = yield* take
        const second = yield* take
        assert.notStrictEqual(first.rt.info.id, second.rt.info.id)
        assert.strictEqual((yield* first.rt.runCommand("whoami")).content, "openhands")
        yield* first.rt.runCommand("touch /workspace/used-by-first")
        yield* first.release
        // A released member is removed, not returned to the pool.
        assert.deepStrictEqual(containersWithLabel(`effect-sandbox.session=${first.rt.info.id}`), [])
        const third = yield* take
        assert.strictEqual((yield* third.rt.runCommand("ls /workspace")).content, "")
        yield* second.release
        yield* third.release
        yield* Scope.close(poolScope, Exit.void)
        assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
      }),
    60_000
  )
})
