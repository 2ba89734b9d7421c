/** MCP tool calls (spec §9) for runtimes configured with the test's MCP server. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { realpathSync } from "node:fs"
import { join } from "node:path"
import { ErrorObservation, McpCallAction, McpObservation, McpTool, type RuntimeShape } from "../../src/index.ts"
import { withRuntime } from "./helpers.ts"
import { type ConformanceTarget, toolTitle } from "./target.ts"

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

/** server-everything's `echo`, as listed by a runtime whose server is named `server`. */
export const echoTool = (server: string) =>
  new McpTool({
    server,
    name: "echo",
    description: "Echoes back the input string",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", description: "Message to echo" } },
      required: ["message"],
      $schema: "http://json-schema.org/draft-07/schema#"
    }
  })

/** `rt.listTools` holds server-everything's tools, all from `server`, `echo` among them as it is defined. */
export const assertEverythingTools = (rt: RuntimeShape, server: string) =>
  Effect.gen(function*() {
    const tools = yield* rt.listTools
    const names = tools.map((t) => t.name)
    assert.includeMembers(names, ["echo", "get-sum", "get-env"])
    assert.strictEqual(new Set(names).size, names.length, `a tool listed twice: ${names}`)
    assert.deepStrictEqual(tools.map((t) => t.server), names.map(() => server))
    assert.deepStrictEqual(tools.find((t) => t.name === "echo"), echoTool(server))
    for (const tool of tools) assert.strictEqual(tool.inputSchema["type"], "object", tool.name)
  })

export const mcpConformance = (target: ConformanceTarget) =>
  describe(toolTitle(target, "mcp"), () => {
    const live = it.live.skipIf(!target.capabilities.mcp)
    live("calls a tool and returns its CallToolResult as JSON", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const obs = yield* rt.callTool({ name: "echo", arguments: { message: "hi there" } })
          assert.instanceOf(obs, McpObservation, obs.content)
          assert.deepStrictEqual(JSON.parse(obs.content), { content: [{ type: "text", text: "Echo: hi there" }] })
          assert.strictEqual((obs as McpObservation).name, "echo")
          assert.deepStrictEqual((obs as McpObservation).arguments, { message: "hi there" })
        })))

    live("lists every tool with its server, description and input schema", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* assertEverythingTools(rt, everythingServer.name)
        })))

    live("answers an unknown tool with OpenHands' error text", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const obs = yield* rt.run(new McpCallAction({ name: "no-such-tool" }))
          assert.instanceOf(obs, ErrorObservation)
          assert.strictEqual(obs.content, "No matching MCP agent found for tool name: no-such-tool")
        })))

    live("reports a tool's own error as an isError result", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const obs = yield* rt.callTool({ name: "echo", arguments: { wrong: 1 } })
          assert.instanceOf(obs, McpObservation, obs.content)
          assert.strictEqual(JSON.parse(obs.content).isError, true)
        })))
  })
