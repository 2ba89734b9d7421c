/**
 * The conformance suite against E2BRuntime, driven through the real `e2b` SDK against the E2B
 * stand-in (test/providers/e2b/README.md): the runtime image as the template, every sandbox a
 * container on the local engine. The tools cases are skipped (the base image has none of them).
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { E2BRuntime } from "../../src/e2b.ts"
import { describeDocker } from "../docker/infra.ts"
import { API_KEY, runtimeImage, standinOptions, templates } from "../providers/e2b/fixture.ts"
import { type Standin, startStandin } from "../providers/e2b/server.ts"
import { e2bLifecycle } from "./hosted/e2b.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { runConformance } from "./suite.ts"

describeDocker("e2b (stand-in)", () => {
  let standin: Standin
  const layer = (noChangeTimeoutSeconds: number) =>
    E2BRuntime.layer(standinOptions(standin, { noChangeTimeoutSeconds }))

  // The first run builds the runtime image (a minute on a busy machine): here, not in the first case's 30 s.
  beforeAll(async () => {
    standin = await startStandin({ apiKey: API_KEY, templates: templates(await runtimeImage()) })
    await Effect.runPromise(Effect.scoped(Layer.build(layer(10))))
  }, 300_000)

  runConformance({
    name: "E2BRuntime (stand-in, runtime image template)",
    layer: ({ noChangeTimeoutSeconds }) => layer(noChangeTimeoutSeconds),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false, snapshot: true }
  })

  hostedLifecycleConformance(
    e2bLifecycle(() => ({ template: "effect-sandbox-runtime", standin: { url: standin.url, apiKey: API_KEY } }))
  )

  afterAll(async () => {
    // Every conformance test released its runtime: no sandbox (container) of the stand-in may remain.
    const left = await standin.containers()
    await standin.close()
    assert.deepStrictEqual(left, [])
  })
})
