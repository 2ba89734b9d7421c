/**
 * The conformance suite against DockerRuntime on the minimal Debian base image:
 * the image contract alone (bash, glibc, a user), no tools. The IPython, browser
 * and MCP cases are skipped here (no kernel, browser or MCP server); docker.test.ts
 * runs them on the tools image. A file of its own so the two runs, each a few
 * minutes of container starts, go to different test workers.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DockerRuntime } from "../../src/docker.ts"
import { baseImage, containersWithLabel, describeDocker } from "../docker/infra.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker (base image)", () => {
  const image = baseImage()
  const layer = (noChangeTimeoutSeconds: number) => DockerRuntime.layer({ baseImage: image, noChangeTimeoutSeconds })
  // The first start builds the runtime image (a minute on a busy machine): here, not in the first case's 30 s.
  beforeAll(() => Effect.runPromise(Effect.scoped(Layer.build(layer(10)))), 300_000)
  runConformance({
    name: "DockerRuntime (base image)",
    layer: ({ noChangeTimeoutSeconds }) => layer(noChangeTimeoutSeconds),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false }
  })
  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
