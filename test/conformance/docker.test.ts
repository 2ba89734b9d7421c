/**
 * The conformance suite against DockerRuntime on both images: the lifecycle, stream and tool cases
 * on the tools image, with IPython (with agent_skills), the browser and an MCP server running
 * inside the container (the suite asserts the runtime reports them); the shell, files, environment
 * and process cases on the minimal base image, the image contract alone (bash, glibc, a user), with
 * no tool started. One file for both, so the CI's container starts are not spent twice on the
 * cases that use no tool.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DockerRuntime } from "../../src/docker.ts"
import { SandboxConfig } from "../../src/index.ts"
import { baseImage, containersWithLabel, describeDocker, toolsImage } from "../docker/infra.ts"
import { dockerLifecycle } from "./hosted/docker.ts"
import { hostedLifecycleConformance } from "./hostedLifecycle.ts"
import { everythingInContainer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker (tools and base images)", () => {
  const tools = toolsImage()
  const base = baseImage()
  const bare = (noChangeTimeoutSeconds: number) => DockerRuntime.layer({ baseImage: base, noChangeTimeoutSeconds })
  const withTools = (noChangeTimeoutSeconds: number) =>
    DockerRuntime.layer({
      baseImage: tools,
      noChangeTimeoutSeconds,
      ipython: true,
      browser: true,
      mcp: { stdio: [everythingInContainer.server] },
      sandbox: new SandboxConfig({ volumes: everythingInContainer.volume })
    })

  // The first starts build the runtime images (a minute each on a busy machine): here, not in the first cases' 30 s.
  beforeAll(() => Effect.runPromise(Effect.scoped(Layer.build(Layer.merge(withTools(10), bare(10))))), 600_000)

  runConformance({
    name: "DockerRuntime (tools image: jupyter, agent_skills, browser, MCP; base image without tools)",
    layer: ({ noChangeTimeoutSeconds }) => withTools(noChangeTimeoutSeconds),
    containsProcesses: true,
    givenSandboxConfig: true,
    capabilities: { pause: true, ipython: true, browser: true, mcp: true, snapshot: true },
    toolless: { layer: ({ noChangeTimeoutSeconds }) => bare(noChangeTimeoutSeconds), givenSandboxConfig: false }
  })

  hostedLifecycleConformance(dockerLifecycle(() => ({ baseImage: base })))

  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
