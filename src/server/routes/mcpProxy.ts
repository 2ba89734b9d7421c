/**
 * OpenHands' MCP proxy (spec §2.4, §9): the session's MCP tools re-exported as
 * one MCP server over SSE at `GET /mcp/sse`, its messages posted to
 * `POST /mcp/messages?sessionId=...`. OpenHands' client calls MCP tools this way
 * (its `get_mcp_config` adds `<server>/mcp/sse` once stdio servers are set), and
 * any MCP client can too. Listing reads the executor's tools; a call runs as a
 * `call_tool_mcp` action, so it takes its turn with the session's other actions;
 * it runs in the server's runtime, so it stops when the client cancels it,
 * disconnects, or the server stops.
 *
 * The MCP SDK's transport writes to Node's response itself; the router leaves a
 * response it finds ended (or gone) alone.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { Data, Effect, FiberSet } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { McpCallAction } from "../../schema/Action.ts"
import { ActionExecutor, type ActionExecutorShape } from "../../services/ActionExecutor.ts"
import { detail, failed, jsonBody } from "../responses.ts"
import { ENDPOINTS } from "./paths.ts"

/** The MCP SDK failed (could not load, connect, or take a message): answered as a 500. */
class McpProxyError extends Data.TaggedError("McpProxyError")<{ readonly message: string }> {}

/** An SDK promise as an effect: its rejection is a typed error, not a defect. */
const sdkCall = <A>(what: string, promise: () => Promise<A>) =>
  Effect.tryPromise({ try: promise, catch: (cause) => new McpProxyError({ message: `${what}: ${String(cause)}` }) })

/** The SDK's server side, loaded when the first client connects. */
const sdk = async () => {
  const [{ Server }, { SSEServerTransport }, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/sse.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { Server, SSEServerTransport, types }
}

type Sdk = Awaited<ReturnType<typeof sdk>>

/** Runs an effect as a fiber of the server's runtime, interrupted when `signal` aborts. */
type RunPromise = <A, E>(effect: Effect.Effect<A, E>, options?: Effect.RunOptions) => Promise<A>

/**
 * An MCP server whose tools are the executor's. Its requests run through `run`, with the
 * SDK's signal for the request: a client's `notifications/cancelled` interrupts the call.
 */
const proxyServer = ({ Server, types }: Sdk, executor: ActionExecutorShape, run: RunPromise) => {
  const server = new Server({ name: "effect-sandbox", version: "0.1.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(types.ListToolsRequestSchema, async (_, { signal }) => ({
    tools: (await run(executor.listMcpTools, { signal })).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: "object" }
    }))
  }))
  server.setRequestHandler(types.CallToolRequestSchema, async ({ params }, { signal }) => {
    const action = new McpCallAction({ name: params.name, arguments: params.arguments ?? {} })
    const observation = await run(executor.execute(action), { signal })
    if (observation._tag !== "McpObservation") {
      throw new types.McpError(types.ErrorCode.InvalidParams, observation.content)
    }
    const result = JSON.parse(observation.content) as { isError?: boolean; error?: string; content: Array<unknown> }
    // A failed or timed-out call: the observation's error text becomes the tool's text.
    return typeof result.error === "string"
      ? { isError: true, content: [{ type: "text" as const, text: result.error }] }
      : result as { content: Array<{ type: "text"; text: string }> }
  })
  return server
}

const nodeResponse = (request: HttpServerRequest.HttpServerRequest) =>
  NodeHttpServerRequest.toServerResponse(request) as ServerResponse

export const mcpProxyRoutes = HttpRouter.use(Effect.fn(function*(router) {
  const executor = yield* ActionExecutor
  const sessions = new Map<string, SSEServerTransport>()

  yield* router.add(
    ...ENDPOINTS.mcpSse,
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const response = nodeResponse(request)
      const loaded = yield* sdkCall("cannot load the MCP SDK", sdk)
      const transport = new loaded.SSEServerTransport(ENDPOINTS.mcpMessages[1], response)
      // The session's calls are fibers of the server's runtime, owned by this stream: they are
      // interrupted when the client goes or the server stops (then this handler is interrupted).
      const run = yield* FiberSet.makeRuntimePromise()
      const server = proxyServer(loaded, executor, run)
      sessions.set(transport.sessionId, transport)
      yield* sdkCall("cannot connect the MCP session", () => server.connect(transport))
      // The stream stays open until the client goes (or the server stops).
      yield* Effect.callback<void>((resume) => {
        if (response.destroyed) return resume(Effect.void)
        response.once("close", () => resume(Effect.void))
      }).pipe(
        Effect.ensuring(Effect.sync(() => {
          sessions.delete(transport.sessionId)
          // The stream's connection serves nothing else: closing it ends the MCP session too, and a
          // client that keeps its socket open cannot hold a stopping server up.
          response.destroy()
          void server.close().catch(() => undefined)
        }))
      )
      return HttpServerResponse.empty()
    }).pipe(Effect.scoped, Effect.catch(failed))
  )

  yield* router.add(
    ...ENDPOINTS.mcpMessages,
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = new URL(request.url, "http://server").searchParams.get("sessionId") ?? ""
      const transport = sessions.get(id)
      if (transport === undefined) return detail(404, `No MCP session ${JSON.stringify(id)}: connect to /mcp/sse first`)
      // The body is read and parsed within the server's limits, not the SDK's (which parses whatever fits 4 MB).
      const body = yield* jsonBody
      yield* sdkCall("cannot handle the MCP message", () =>
        transport.handlePostMessage(
          NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage,
          nodeResponse(request),
          body
        ))
      return HttpServerResponse.empty()
    }).pipe(Effect.catch(failed))
  )
}))
