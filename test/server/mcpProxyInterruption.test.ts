/**
 * Calls through the MCP proxy run in the server's runtime: a client that
 * cancels a call, or goes away in the middle of one, stops the tool call it
 * made (the session's MCP server sees `notifications/cancelled`), and the
 * proxy goes on serving.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { Effect } from "effect"
import { uniqueSeconds } from "../conformance/helpers.ts"
import { recorded, slowMcpServer } from "../conformance/interruption.ts"
import { eventually } from "../eventually.ts"
import { postJson, serverLayer, TestServer, type TestServerShape } from "./helpers.ts"

/** An MCP client connected to the server's proxy, closed with the scope. */
const connect = (server: TestServerShape) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "proxy-interruption", version: "1.0.0" })
      await client.connect(
        new SSEClientTransport(new URL(`${server.baseUrl}/mcp/sse`), {
          requestInit: { headers: { "X-Session-API-Key": server.key } }
        })
      )
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** Starts the slow tool through `client` (its promise's rejection ignored) and waits until it runs. */
const startSleep = (client: Client, tag: string, signal?: AbortSignal) =>
  Effect.gen(function*() {
    client.callTool({ name: "sleep", arguments: { seconds: 30, tag } }, undefined, signal ? { signal } : {})
      .catch(() => undefined)
    yield* eventually("the tool call started", () => recorded(tag, "started"))
  })

layer(serverLayer(), { excludeTestServices: true, timeout: 30_000 })("MCP proxy interruption", (it) => {
  it.effect("a call the client cancels is cancelled at the MCP server", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const set = yield* postJson(server, "/update_mcp_server", [slowMcpServer])
      assert.strictEqual(set.status, 200, set.text)
      const client = yield* connect(server)
      const tag = `cancel-${uniqueSeconds()}`
      const abort = new AbortController()
      yield* startSleep(client, tag, abort.signal)
      abort.abort()
      yield* eventually("the MCP server saw the call cancelled", () => recorded(tag, "cancelled"), 1_000)
      assert.isFalse(recorded(tag, "finished"))
      const echo = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "after" } }))
      assert.deepStrictEqual(echo, { content: [{ type: "text", text: "after" }] })
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.effect("a client that disconnects mid-call stops the call", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const set = yield* postJson(server, "/update_mcp_server", [slowMcpServer])
      assert.strictEqual(set.status, 200, set.text)
      const tag = `gone-${uniqueSeconds()}`
      yield* Effect.scoped(Effect.gen(function*() {
        yield* startSleep(yield* connect(server), tag)
      })) // the client closes here
      yield* eventually("the MCP server saw the call cancelled", () => recorded(tag, "cancelled"), 1_000)
      assert.isFalse(recorded(tag, "finished"))
      const client = yield* connect(server)
      const echo = yield* Effect.promise(() => client.callTool({ name: "echo", arguments: { text: "next" } }))
      assert.deepStrictEqual(echo, { content: [{ type: "text", text: "next" }] })
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
