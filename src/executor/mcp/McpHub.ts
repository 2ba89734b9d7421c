/**
 * MCP tools (spec §9, §12, §15.4): clients of the session's MCP servers, built
 * with @modelcontextprotocol/sdk, for stdio servers (each a child process owned
 * by the hub) and remote ones (streamable HTTP, or legacy SSE). A call goes to
 * the first server that lists a tool of that name; the observation's content is
 * the JSON of the tool's `CallToolResult`, as OpenHands returns it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Semaphore } from "effect"
import type { McpCallAction } from "../../schema/Action.ts"
import { ErrorObservation, McpObservation } from "../../schema/Observation.ts"

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
  readonly apiKey?: string
}

export interface McpHub {
  /** Replace the stdio servers (OpenHands' /update_mcp_server); returns connection errors, if any. */
  readonly setStdioServers: (servers: ReadonlyArray<McpStdioServer>) => Effect.Effect<ReadonlyArray<string>>
  readonly call: (action: McpCallAction) => Effect.Effect<McpObservation | ErrorObservation>
  /** Tool names by server. */
  readonly tools: Effect.Effect<Readonly<Record<string, ReadonlyArray<string>>>>
  readonly close: Effect.Effect<void>
}

interface Connected {
  readonly client: Client
  readonly tools: ReadonlyArray<string>
}

const connect = async (server: McpStdioServer | McpRemoteServer, baseEnv: Readonly<Record<string, string>>) => {
  const client = new Client({ name: "effect-sandbox", version: "0.1.0" })
  const transport = "command" in server
    ? new StdioClientTransport({
      command: server.command,
      args: [...server.args],
      env: { ...baseEnv, ...server.env },
      stderr: "ignore"
    })
    : server.transport === "sse"
    ? new SSEClientTransport(new URL(server.url), {
      requestInit: { headers: server.apiKey === undefined ? {} : { "X-Session-API-Key": server.apiKey } }
    })
    : new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.apiKey === undefined ? {} : { "X-Session-API-Key": server.apiKey } }
    })
  await client.connect(transport)
  const { tools } = await client.listTools()
  return { client, tools: tools.map((t) => t.name) } satisfies Connected
}

/** Seconds a tool call may take before it is answered as timed out (OpenHands' shape). */
const DEFAULT_TOOL_TIMEOUT = 120

export const makeMcpHub = (
  remote: ReadonlyArray<McpRemoteServer>,
  stdio: ReadonlyArray<McpStdioServer>,
  baseEnv: Readonly<Record<string, string>>
): Effect.Effect<McpHub> =>
  Effect.gen(function*() {
    const connected = new Map<string, Connected>()
    const lock = yield* Semaphore.make(1)

    const connectAll = (servers: ReadonlyArray<McpStdioServer | McpRemoteServer>) =>
      Effect.promise(async () => {
        const errors: Array<string> = []
        await Promise.all(servers.map(async (server) => {
          try {
            connected.set(server.name, await connect(server, baseEnv))
          } catch (error) {
            errors.push(`${server.name}: ${(error as Error).message}`)
          }
        }))
        return errors
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
    const setStdioServers = (servers: ReadonlyArray<McpStdioServer>) =>
      lock.withPermits(1)(Effect.gen(function*() {
        yield* closeAll(stdioNames)
        stdioNames = servers.map((s) => s.name)
        return yield* connectAll(servers)
      }))

    yield* connectAll(remote)
    yield* setStdioServers(stdio)

    const call = (action: McpCallAction) =>
      lock.withPermits(1)(Effect.promise(async (): Promise<McpObservation | ErrorObservation> => {
        if (connected.size === 0) return new ErrorObservation({ content: "No MCP servers configured" })
        const owner = [...connected.values()].find((c) => c.tools.includes(action.name))
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
            { timeout: seconds * 1000 }
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
      call,
      tools: Effect.sync(() => Object.fromEntries([...connected].map(([name, c]) => [name, c.tools]))),
      // Read at close time: servers added later by setStdioServers are closed too.
      close: Effect.suspend(() => closeAll([...connected.keys()]))
    }
  })
