/** MCP tool calls (spec §9) for runtimes configured with the test's MCP server. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { realpathSync } from "node:fs"
import { join } from "node:path"
import { ErrorObservation, McpCallAction, McpObservation } from "../../src/index.ts"
import { withRuntime } from "./helpers.ts"
import type { ConformanceTarget } from "./target.ts"

/** @modelcontextprotocol/server-everything over stdio: a real MCP server from npm. */
export const everythingServer = {
  name: "everything",
  command: process.execPath,
  args: [
    join(import.meta.dirname, "..", "..", "node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    "stdio"
  ],
  env: {}
}

/** Where `everythingInContainer` finds the host's node_modules inside the container. */
const CONTAINER_MODULES = "/opt/mcp/node_modules"

/**
 * The same server inside a container: the host's node_modules (the server and its
 * dependencies) mounted read-only as a `node_modules` directory, so Node resolves
 * them there as here, and run by the Node every runtime image carries.
 */
export const everythingInContainer = {
  volume: `${realpathSync(join(import.meta.dirname, "..", "..", "node_modules"))}:${CONTAINER_MODULES}:ro`,
  server: {
    ...everythingServer,
    command: "/opt/effect-sandbox/bin/node",
    args: [`${CONTAINER_MODULES}/@modelcontextprotocol/server-everything/dist/index.js`, "stdio"]
  }
}

export const mcpConformance = (target: ConformanceTarget) =>
  describe("mcp", () => {
    it.live("calls a tool and returns its CallToolResult as JSON", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          if (!rt.info.capabilities.mcp) return
          const obs = yield* rt.callTool({ name: "echo", arguments: { message: "hi there" } })
          assert.instanceOf(obs, McpObservation, obs.content)
          assert.deepStrictEqual(JSON.parse(obs.content), { content: [{ type: "text", text: "Echo: hi there" }] })
          assert.strictEqual((obs as McpObservation).name, "echo")
          assert.deepStrictEqual((obs as McpObservation).arguments, { message: "hi there" })
        })))

    it.live("answers an unknown tool with OpenHands' error text", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          if (!rt.info.capabilities.mcp) return
          const obs = yield* rt.run(new McpCallAction({ name: "no-such-tool" }))
          assert.instanceOf(obs, ErrorObservation)
          assert.strictEqual(obs.content, "No matching MCP agent found for tool name: no-such-tool")
        })))

    it.live("reports a tool's own error as an isError result", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          if (!rt.info.capabilities.mcp) return
          const obs = yield* rt.callTool({ name: "echo", arguments: { wrong: 1 } })
          assert.instanceOf(obs, McpObservation, obs.content)
          assert.strictEqual(JSON.parse(obs.content).isError, true)
        })))
  })
