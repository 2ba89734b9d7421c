/**
 * The MCP proxy (`GET /mcp/sse`): an MCP client, as OpenHands' `call_tool_mcp`
 * uses, reaches the tools of the stdio servers `/update_mcp_server` set.
 */
import { assert, describe, it as test, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { defaultServerEntry } from "../../src/layers/local/serverProcess.ts"
import { LISTENING_PREFIX } from "../../src/server/announce.ts"
import { everythingServer } from "../conformance/mcp.ts"
import { postJson, serverLayer, tempDir, TestServer, type TestServerShape } from "./helpers.ts"

/** An MCP client connected to the server's proxy with these headers, closed with the scope. */
const connect = (server: TestServerShape, headers: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "proxy-test", version: "1.0.0" })
      await client.connect(new SSEClientTransport(new URL(`${server.baseUrl}/mcp/sse`), { requestInit: { headers } }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

layer(serverLayer(), { excludeTestServices: true })("MCP proxy", (it) => {
  it.effect("re-exports the session's MCP tools over SSE, and calls them", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const set = yield* postJson(server, "/update_mcp_server", [{ ...everythingServer, name: "ev" }])
      assert.strictEqual(set.status, 200, set.text)
      const client = yield* connect(server, { "X-Session-API-Key": server.key })
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.find((tool) => tool.name === "echo")?.description, "Echoes back the input string")
      const result = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { message: "via proxy" } }))
      assert.deepStrictEqual(result, { content: [{ type: "text", text: "Echo: via proxy" }] })
      // A tool no server has is a JSON-RPC error with OpenHands' text.
      const missing = yield* Effect.flip(Effect.tryPromise(() => client.callTool({ name: "nope", arguments: {} })))
      assert.include(String(missing.cause), "No matching MCP agent found for tool name: nope")
    }).pipe(Effect.scoped))

  it.effect("takes the key as a bearer token too, and refuses a wrong one", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const client = yield* connect(server, { Authorization: `Bearer ${server.key}` })
      assert.isArray((yield* Effect.promise(() => client.listTools())).tools)
      const refused = yield* Effect.flip(Effect.tryPromise(() =>
        new Client({ name: "x", version: "1" }).connect(
          new SSEClientTransport(new URL(`${server.baseUrl}/mcp/sse`), {
            requestInit: { headers: { "X-Session-API-Key": "wrong" } }
          })
        )
      ))
      assert.include(String(refused.cause), "403")
    }).pipe(Effect.scoped))

  it.effect("answers a message for an unknown session with 404", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const reply = yield* postJson(server, "/mcp/messages?sessionId=nope", { jsonrpc: "2.0", id: 1, method: "ping" })
      assert.strictEqual(reply.status, 404)
      assert.deepStrictEqual(JSON.parse(reply.text), {
        detail: "No MCP session \"nope\": connect to /mcp/sse first"
      })
    }))
})

describe("MCP proxy at shutdown", () => {
  // A client still connected, or one that closed but left its sockets open (the SDK's SSE client does).
  test.live.each(["connected", "closed"])(
    "a proxy client (%s) does not hold the server up: on SIGTERM it exits by itself",
    (client) =>
      Effect.gen(function*() {
        const workspace = yield* tempDir("proxy-stop-")
        const entry = yield* defaultServerEntry
        const child = spawn(process.execPath, [
          entry,
          "0",
          "--working-dir",
          workspace,
          "--host",
          "127.0.0.1"
        ], {
          stdio: ["ignore", "pipe", "inherit"],
          env: { ...process.env, SESSION_API_KEY: "proxy-key" }
        })
        const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
          child.once("exit", (code, signal) => resolve({ code, signal }))
        )
        const line = yield* Effect.promise(() =>
          new Promise<string>((resolve) => child.stdout.once("data", (d: Buffer) => resolve(String(d))))
        )
        const { port } = JSON.parse(line.slice(LISTENING_PREFIX.length)) as { port: number }
        const server = { baseUrl: `http://127.0.0.1:${port}`, key: "proxy-key" } as TestServerShape
        const mcp = yield* connect(server, { "X-Session-API-Key": server.key })
        assert.isArray((yield* Effect.promise(() => mcp.listTools())).tools)
        if (client === "closed") yield* Effect.promise(() => mcp.close())
        child.kill("SIGTERM")
        // Node's server would wait for the stream and the client's sockets (Effect's default grace is
        // 20 s, then Node's close waits on); it ends them and exits as an interrupted program does (130).
        // Held up, it would take 4 s (until the client's keep-alive drops its sockets) or 20 s and more;
        // it takes tens of milliseconds.
        const ended = yield* Effect.promise(() => exit).pipe(Effect.timeout("2 seconds"))
        assert.deepStrictEqual(ended, { code: 130, signal: null })
      }).pipe(Effect.scoped)
  )
})
