/**
 * The conformance suite against DockerRuntime on the tools image, with the
 * IPython (with agent_skills), the browser and an MCP server running inside
 * the container, so every case runs, the IPython, browser and MCP ones included (the suite asserts the runtime
 * reports them). docker-base.test.ts runs the suite on the minimal base image, where those cases are skipped.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DockerRuntime } from "../../src/docker.ts"
import { SandboxConfig } from "../../src/index.ts"
import { containersWithLabel, describeDocker, toolsImage } from "../docker/infra.ts"
import { everythingInContainer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker (tools image)", () => {
  const tools = toolsImage()
  const withTools = (noChangeTimeoutSeconds: number) =>
    DockerRuntime.layer({
      baseImage: tools,
      noChangeTimeoutSeconds,
      ipython: true,
      browser: true,
      mcp: { stdio: [everythingInContainer.server] },
      sandbox: new SandboxConfig({ volumes: everythingInContainer.volume })
    })

  // The first start builds the runtime image (a minute on a busy machine): here, not in the first case's 30 s.
  beforeAll(() => Effect.runPromise(Effect.scoped(Layer.build(withTools(10)))), 300_000)

  runConformance({
    name: "DockerRuntime (tools image: jupyter, agent_skills, browser, MCP)",
    layer: ({ noChangeTimeoutSeconds }) => withTools(noChangeTimeoutSeconds),
    containsProcesses: true,
    givenSandboxConfig: true,
    capabilities: { pause: true, ipython: true, browser: true, mcp: true },
    toolless: {
      layer: ({ noChangeTimeoutSeconds }) => DockerRuntime.layer({ baseImage: tools, noChangeTimeoutSeconds }),
      givenSandboxConfig: false
    }
  })

  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
