/**
 * The conformance suite against DockerRuntime, twice: on the minimal Debian base
 * image (the image contract alone: the IPython and MCP cases skip themselves, as
 * that image has no kernel), and on the tools image with the jupyter plugin and
 * an MCP server running inside the container, so every case runs.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DockerRuntime, Runtime, SandboxConfig } from "../../src/index.ts"
import { baseImage, containersWithLabel, describeDocker, toolsImage } from "../docker/infra.ts"
import { everythingInContainer } from "./mcp.ts"
import { runConformance } from "./suite.ts"

describeDocker("docker", () => {
  const base = baseImage()
  runConformance({
    name: "DockerRuntime (base image)",
    layer: ({ noChangeTimeoutSeconds }) => DockerRuntime.layer({ baseImage: base, noChangeTimeoutSeconds }),
    // The container is the boundary, as in OpenHands.
    restrictedToWorkspace: false
  })

  const tools = toolsImage()
  const withTools = (noChangeTimeoutSeconds: number) =>
    DockerRuntime.layer({
      baseImage: tools,
      noChangeTimeoutSeconds,
      plugins: ["jupyter"],
      mcpServers: [everythingInContainer.server],
      sandbox: new SandboxConfig({ volumes: everythingInContainer.volume })
    })
  // The IPython and MCP cases skip runtimes without the capability: make sure this one has both.
  it.live("the tools image runtime reports IPython and MCP, so their cases run", () =>
    Effect.gen(function*() {
      const rt = yield* Runtime
      assert.deepStrictEqual(rt.info.capabilities, { pause: true, ipython: true, browser: false, mcp: true })
    }).pipe(Effect.provide(Layer.fresh(withTools(1)))))
  runConformance({
    name: "DockerRuntime (tools image: jupyter, MCP)",
    layer: ({ noChangeTimeoutSeconds }) => withTools(noChangeTimeoutSeconds),
    restrictedToWorkspace: false
  })

  afterAll(() => {
    // Every conformance test released its runtime: no container of this process may remain.
    assert.deepStrictEqual(containersWithLabel(`effect-sandbox.owner.pid=${process.pid}`), [])
  })
})
