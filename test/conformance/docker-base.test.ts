/**
 * The conformance suite against DockerRuntime on the minimal Debian base image:
 * the image contract alone (bash, glibc, a user), no tools. The IPython, browser
 * and MCP cases are skipped here (no kernel, browser or MCP server); docker.test.ts
 * runs them on the tools image. A file of its own so the two runs, each a few
 * minutes of container starts, go to different test workers.
 */
import { afterAll, assert } from "@effect/vitest"
import { DockerRuntime } from "../../src/docker.ts"
import { baseImage, containersWithLabel, describeDocker } from "../docker/infra.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker (base image)", () => {
  const image = baseImage()
  runConformance({
    name: "DockerRuntime (base image)",
    layer: ({ noChangeTimeoutSeconds }) => DockerRuntime.layer({ baseImage: image, noChangeTimeoutSeconds }),
    containsProcesses: true,
    capabilities: { pause: true, ipython: false, browser: false, mcp: false }
  })
  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
