/**
 * MCP tools (spec §9, §12, §15.4): clients of the session's MCP servers, built
 * with @modelcontextprotocol/sdk, for stdio servers (each a child process owned
 * by the hub) and remote ones (streamable HTTP, or legacy SSE). A call goes to
 * the first server that lists a tool of that name; the observation's content is
 * the JSON of the tool's `CallToolResult`, as OpenHands returns it. Each
 * server's tools are listed (every page) once, when it connects.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Redacted, Semaphore } from "effect"
import type { McpCallAction } from "../../schema/Action.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { McpTool } from "../../schema/McpTool.ts"
import { ErrorObservation, McpObservation } from "../../schema/Observation.ts"
import { SecretMask } from "../../schema/secrets.ts"

/** OpenHands' MCPStdioServerConfig. */
export interface McpStdioServer {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** A server reached over the network (OpenHands' SSE and SHTTP server configs). */
export interface McpRemoteServer {
  readonly name: string
  readonly url: string
  readonly transport: "http" | "sse"
  /** Sent as `X-Session-API-Key`; `Redacted`, so printing or logging the config never shows it. */
  readonly apiKey?: Redacted.Redacted<string>
}

/** The request headers of a remote server: its key, unwrapped only here. */
const remoteHeaders = (server: McpRemoteServer) =>
  server.apiKey === undefined ? {} : { "X-Session-API-Key": Redacted.value(server.apiKey) }

export interface McpHub {
  /** Replace the stdio servers (OpenHands' /update_mcp_server); returns connection errors, if any. */
  readonly setStdioServers: (servers: ReadonlyArray<McpStdioServer>) => Effect.Effect<ReadonlyArray<string>>
  readonly call: (action: McpCallAction) => Effect.Effect<McpObservation | ErrorObservation>
  /** The tools of every connected server: remote servers first, then stdio ones, each in configuration order. */
  readonly listTools: Effect.Effect<ReadonlyArray<McpTool>>
  readonly close: Effect.Effect<void>
}

interface Connected {
  readonly client: Client
  readonly tools: ReadonlyArray<McpTool>
}

/** Every page of the server's `tools/list`. */
const allTools = async (client: Client, server: string) => {
  const tools: Array<McpTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    for (const tool of page.tools) {
      tools.push(
        new McpTool({
          server,
          name: tool.name,
          description: tool.description ?? "",
          inputSchema: tool.inputSchema
        })
      )
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/**
 * The SDK's client and transports, loaded on first use: the SDK builds its zod schemas as it
 * loads, which a server without MCP servers should not pay for at start.
 */
const sdk = async () => {
  const [{ Client }, { SSEClientTransport }, { StdioClientTransport }, { StreamableHTTPClientTransport }] =
    await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/sse.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    ])
  return { Client, SSEClientTransport, StdioClientTransport, StreamableHTTPClientTransport }
}

const connect = async (server: McpStdioServer | McpRemoteServer, baseEnv: Readonly<Record<string, string>>) => {
  const { Client, SSEClientTransport, StdioClientTransport, StreamableHTTPClientTransport } = await sdk()
  const client = new Client({ name: "effect-sandbox", version: "0.1.0" })
  const transport = "command" in server
    ? new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: { ...baseEnv, ...server.env },
      stderr: "ignore"
    })
    : server.transport === "sse"
    ? new SSEClientTransport(new URL(server.url), { requestInit: { headers: remoteHeaders(server) } })
    : new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: remoteHeaders(server) } })
  try {
    await client.connect(transport)
    return { client, tools: await allTools(client, server.name) } satisfies Connected
  } catch (error) {
    // A failed SSE connection would otherwise keep reconnecting (and the process alive).
    await transport.close().catch(() => undefined)
    throw error
  }
}

/** OpenHands' answer to a tool call when no MCP server is connected (TestRuntime's with `mcp` off). */
export const NO_MCP_SERVERS_TEXT = "No MCP servers configured"

/** Seconds a tool call may take before it is answered as timed out (OpenHands' shape). */
const DEFAULT_TOOL_TIMEOUT = 120

export const makeMcpHub = (
  remote: ReadonlyArray<McpRemoteServer>,
  stdio: ReadonlyArray<McpStdioServer>,
  baseEnv: Readonly<Record<string, string>>
): Effect.Effect<McpHub, RuntimeStartError> =>
  Effect.gen(function*() {
    const connected = new Map<string, Connected>()
    const lock = yield* Semaphore.make(1)
    // A remote server's key never shows in a connection error or a call's answer (which a server may echo).
    const keys = new SecretMask()
    for (const server of remote) if (server.apiKey !== undefined) keys.add(Redacted.value(server.apiKey))

    const connectAll = (servers: ReadonlyArray<McpStdioServer | McpRemoteServer>) =>
      Effect.promise(async () => {
        const results = await Promise.allSettled(servers.map((server) => connect(server, baseEnv)))
        // Added in configuration order, whichever connected first: the first server listing a tool gets its calls.
        return results.flatMap((result, i) => {
          const name = servers[i]!.name
          if (result.status === "fulfilled") {
            connected.set(name, result.value)
            return []
          }
          return [keys.text(`${name}: ${(result.reason as Error).message}`)]
        })
      })

    const closeAll = (names: ReadonlyArray<string>) =>
      Effect.promise(() =>
        Promise.all(names.map(async (name) => {
          const entry = connected.get(name)
          connected.delete(name)
          await entry?.client.close().catch(() => undefined)
        }))
      )

    let stdioNames: ReadonlyArray<string> = []
    /**
     * The tools, taken when a replacement is complete: a listing neither waits for a
     * running tool call nor sees a half-replaced set of servers.
     */
    let listing: ReadonlyArray<McpTool> = []
    const setStdioServers = (servers: ReadonlyArray<McpStdioServer>) =>
      lock.withPermits(1)(Effect.gen(function*() {
        yield* closeAll(stdioNames)
        stdioNames = servers.map((s) => s.name)
        const errors = yield* connectAll(servers)
        listing = [...connected.values()].flatMap((c) => c.tools)
        return errors
      }))

    // The configured servers are part of the runtime: one that cannot connect fails the start
    // (as LocalRuntime's start fails on /update_mcp_server's router_error_log).
    const errors = [...yield* connectAll(remote), ...yield* setStdioServers(stdio)]
    if (errors.length > 0) {
      yield* closeAll([...connected.keys()])
      return yield* new RuntimeStartError({ message: `MCP servers failed to start: ${errors.join("; ")}` })
    }

    const call = (action: McpCallAction) =>
      // Interrupted, `signal` aborts the SDK's request: it sends the server notifications/cancelled
      // and stops waiting, so the tool call ends with the action (in process, or its HTTP request).
      lock.withPermits(1)(Effect.promise(async (signal): Promise<McpObservation | ErrorObservation> => {
        if (connected.size === 0) return new ErrorObservation({ content: NO_MCP_SERVERS_TEXT })
        const owner = [...connected.values()].find((c) => c.tools.some((t) => t.name === action.name))
        if (owner === undefined) {
          return new ErrorObservation({ content: `No matching MCP agent found for tool name: ${action.name}` })
        }
        const seconds = action.timeout ?? DEFAULT_TOOL_TIMEOUT
        const observe = (content: unknown) =>
          new McpObservation({ content: JSON.stringify(content), name: action.name, arguments: action.arguments })
        try {
          const result = await owner.client.callTool(
            { name: action.name, arguments: { ...action.arguments } },
            undefined,
            { timeout: seconds * 1000, signal }
          )
          return observe(result)
        } catch (error) {
          const message = (error as Error).message
          return observe({
            isError: true,
            error: /timed? ?out/i.test(message) ? `Tool "${action.name}" timed out after ${seconds} seconds` : message,
            content: []
          })
        }
      }))

    return {
      setStdioServers,
      call: (action) => Effect.map(call(action), (observation) => keys.deep(observation)),
      listTools: Effect.sync(() => listing),
      // Read at close time: servers added later by setStdioServers are closed too.
      close: Effect.suspend(() => closeAll([...connected.keys()]))
    }
  })
