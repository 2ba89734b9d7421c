/**
 * KubernetesRuntime's warm pool (the shared builder's): ready pods handed to runtimes at once,
 * never reused (a released one is deleted with its objects), refilled; closing the pool deletes
 * its idle pods, and nothing is left on the stand-in.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { Runtime } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, namespace, sessionObjects, useStandIn } from "./helpers.ts"

describeDocker("KubernetesRuntime warm pool (stand-in)", () => {
  const cluster = useStandIn()

  it.live(
    "hands out ready pods, never reuses them, refills, and deletes idle ones on release",
    () =>
      Effect.gen(function*() {
        const poolScope = yield* Scope.make()
        const pool = yield* Layer.buildWithScope(
          KubernetesRuntime.layerPool({
            kubeConfig: cluster.kubeConfig,
            baseImage: cluster.image,
            deleteWorkspace: true,
            poolSize: 1
          }),
          poolScope
        )
        const warm = KubernetesRuntime.layerWarm().pipe(Layer.provide(Layer.succeedContext(pool)))
        const take = Effect.gen(function*() {
          const scope = yield* Scope.make()
          const rt = Context.get(yield* Layer.buildWithScope(warm, scope), Runtime)
          return { rt, release: Scope.close(scope, Exit.void) }
        })
        const first = yield* take
        assert.strictEqual(first.rt.info.kind, "kubernetes")
        yield* first.rt.runCommand("touch /workspace/used-by-first")
        yield* first.release
        assert.deepStrictEqual((yield* sessionObjects(cluster.kubeConfig, first.rt.info.id)).pods, [])
        const second = yield* take
        assert.notStrictEqual(second.rt.info.id, first.rt.info.id)
        assert.strictEqual((yield* second.rt.runCommand("ls /workspace")).content, "")
        yield* second.release
        yield* Scope.close(poolScope, Exit.void)
        const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
        const managed = { namespace, labelSelector: "effect-sandbox.managed=true" }
        assert.deepStrictEqual((yield* Effect.promise(() => core.listNamespacedPod(managed))).items, [])
        assert.deepStrictEqual(
          (yield* Effect.promise(() => core.listNamespacedPersistentVolumeClaim(managed))).items,
          []
        )
        yield* assertEngineClean(cluster.standIn)
      }),
    180_000
  )
})
