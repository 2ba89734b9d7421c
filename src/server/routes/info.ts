/**
 * Liveness and information endpoints (spec §2.4): `/alive`, `/server_info` (its resources only
 * with the session key),
 * `/vscode/connection_token` (the `vscode` plugin's token, null without it), and `/update_mcp_server`, which replaces the
 * session's stdio MCP servers (connection errors go to `router_error_log`);
 * our `GET /v1/mcp/tools` lists the tools of every connected MCP server, and our
 * `GET /v1/capabilities` says which tools the server was started with cannot work, and why
 * (`{"unavailable": {"ipython": "Cannot start the IPython kernel: ..."}}`), so a runtime's
 * `info.capabilities` is true of the server, not of the options it was given.
 */
import { Effect, Schema } from "effect"
import { type Headers, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { McpStdioServer } from "../../executor/mcp/McpHub.ts"
import { McpToolList } from "../../schema/McpTool.ts"
import { ActionExecutor } from "../../services/ActionExecutor.ts"
import { BadRequest, detail, isRecord, jsonBody } from "../responses.ts"
import { openServerInfo, type ServerClock, serverInfo } from "../serverInfo.ts"
import { VsCode } from "../vscode/VsCode.ts"
import { ENDPOINTS } from "./paths.ts"

const encodeTools = Schema.encodeSync(McpToolList)

const NAME = /^[A-Za-z0-9_-]+$/
const isStrings = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((s) => typeof s === "string")

const mcpServer = (u: unknown, index: number): McpStdioServer | string => {
  if (!isRecord(u)) return `item ${index} is not an object`
  const { name, command, args = [], env = {} } = u
  if (typeof name !== "string" || !NAME.test(name)) return `item ${index}: "name" must match [A-Za-z0-9_-]+`
  if (typeof command !== "string" || command === "") return `item ${index}: "command" must be a non-empty string`
  if (!isStrings(args)) return `item ${index}: "args" must be a list of strings`
  if (!isRecord(env) || !Object.values(env).every((v) => typeof v === "string")) {
    return `item ${index}: "env" must map names to strings`
  }
  return { name, command, args, env: env as Record<string, string> }
}

/**
 * `keyed` tells whether a request carries the session key: `/server_info` is open (clients poll it
 * before they use the key), so without the key it answers only its clocks, not the host's disk,
 * memory and I/O (`openServerInfo`).
 */
export const infoRoutes = (
  clock: ServerClock,
  workingDir: string,
  keyed: (headers: Headers.Headers) => boolean
) =>
  HttpRouter.use(Effect.fn(function*(router) {
    const executor = yield* ActionExecutor
    yield* router.add(...ENDPOINTS.alive, Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" })))
    yield* router.add(
      ...ENDPOINTS.serverInfo,
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const info = serverInfo(clock, workingDir)
        return HttpServerResponse.jsonUnsafe(keyed(request.headers) ? info : openServerInfo(info))
      })
    )
    const { token } = yield* VsCode
    yield* router.add(...ENDPOINTS.vscodeToken, Effect.succeed(HttpServerResponse.jsonUnsafe({ token })))
    yield* router.add(
      ...ENDPOINTS.updateMcpServer,
      Effect.gen(function*() {
        const body = yield* jsonBody
        if (!Array.isArray(body)) {
          return yield* Effect.fail(new BadRequest(400, "Request must be a list of MCP tools to sync"))
        }
        const servers = body.map(mcpServer)
        const problem = servers.find((s): s is string => typeof s === "string")
        if (problem !== undefined) return yield* Effect.fail(new BadRequest(400, `Invalid MCP server list: ${problem}`))
        const errors = yield* executor.setMcpServers(servers as ReadonlyArray<McpStdioServer>)
        return HttpServerResponse.jsonUnsafe({
          detail: "MCP server updated successfully",
          router_error_log: errors.join("\n")
        })
      }).pipe(Effect.catch((e) => Effect.succeed(detail(e.status, e.message))))
    )
    yield* router.add(
      ...ENDPOINTS.capabilities,
      Effect.map(executor.ipythonUnavailable, (reason) =>
        HttpServerResponse.jsonUnsafe({ unavailable: reason === undefined ? {} : { ipython: reason } }))
    )
    yield* router.add(
      ...ENDPOINTS.mcpTools,
      Effect.map(executor.listMcpTools, (tools) =>
        HttpServerResponse.jsonUnsafe(encodeTools({ tools })))
    )
  }))
