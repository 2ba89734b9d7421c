/** Session-key authentication (spec §2.3): `X-Session-API-Key` on every path but /alive and /server_info. */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import {
  call,
  type CallOptions,
  fileForm,
  json,
  type Reply,
  runAction,
  serverLayer,
  TestServer,
  type TestServerShape
} from "./helpers.ts"

const KEY = "s3ssion-key-0123456789"

/** Each protected endpoint with a valid request, and a file or variable a rejected request must not create. */
const post = (value: unknown): CallOptions => ({
  body: JSON.stringify(value),
  headers: { "content-type": "application/json" }
})

const protectedRequests = (server: TestServerShape): Array<readonly [string, string, CallOptions]> => {
  return [
    ["GET /vscode/connection_token", "/vscode/connection_token", {}],
    ["POST /execute_action", "/execute_action", post(runAction(`touch ${join(server.workspace, "ran")}`))],
    ["POST /list_files", "/list_files", post({})],
    [
      "POST /upload_file",
      `/upload_file?destination=${encodeURIComponent(join(server.workspace, "up"))}`,
      { body: fileForm("uploaded.txt", "x") }
    ],
    ["GET /download_files", `/download_files?path=${encodeURIComponent(server.workspace)}`, {}],
    ["POST /update_mcp_server", "/update_mcp_server", post([])],
    ["GET /v1/mcp/tools", "/v1/mcp/tools", {}],
    ["POST /v1/env", "/v1/env", post({ vars: { AUTH_SET: "yes" } })],
    [
      "POST /v1/execute_action/stream",
      "/v1/execute_action/stream",
      post(runAction(`touch ${join(server.workspace, "streamed")}`))
    ]
  ]
}

/** The MCP proxy: refused like the rest (with the key its SSE stream stays open; test/server/mcpProxy.test.ts uses it). */
const proxyRequests: Array<readonly [string, string, CallOptions]> = [
  ["GET /mcp/sse", "/mcp/sse", {}],
  ["POST /mcp/messages", "/mcp/messages?sessionId=x", post({ jsonrpc: "2.0", id: 1, method: "ping" })]
]

const assertRejected = (reply: Reply, what: string) => {
  assert.strictEqual(reply.status, 403, `${what}: ${reply.text}`)
  assert.deepStrictEqual(json(reply), { detail: "Invalid API Key" }, what)
}

/** A request with the path sent exactly as given (fetch would normalise it). */
const rawGet = (server: TestServerShape, path: string) =>
  Effect.promise(() =>
    new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
      const url = new URL(server.baseUrl)
      const req = httpRequest({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
        let body = ""
        res.setEncoding("utf8").on("data", (d: string) => (body += d)).on("end", () =>
          resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on("error", reject).end()
    })
  )

describe("session key authentication", () => {
  layer(serverLayer({ key: KEY }), { excludeTestServices: true })("with a key", (it) => {
    it.effect("/alive and /server_info need no key, and ignore a wrong one", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const auth of [false, "wrong"] as const) {
          const alive = yield* call(server, "/alive", { auth })
          assert.strictEqual(alive.status, 200)
          assert.deepStrictEqual(json(alive), { status: "ok" })
          const info = yield* call(server, "/server_info", { auth })
          assert.strictEqual(info.status, 200)
          assert.containsAllKeys(json(info), ["uptime", "idle_time", "resources"])
        }
      }))

    it.effect("every other endpoint is 403 without the key, with a wrong one, or one of another length", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const wrongKeys = [
          KEY.replace("0", "1"), // same length
          KEY.toUpperCase(),
          KEY.slice(0, -1), // shorter
          `${KEY}0`, // longer
          "",
          `${KEY} ${KEY}`
        ]
        for (const [name, path, options] of [...protectedRequests(server), ...proxyRequests]) {
          assertRejected(yield* call(server, path, { ...options, auth: false }), `${name} without a key`)
          for (const auth of wrongKeys) {
            assertRejected(yield* call(server, path, { ...options, auth }), `${name} with key ${JSON.stringify(auth)}`)
          }
        }
        assertRejected(yield* call(server, "/no/such/route", { auth: false }), "an unknown path")
        // Nothing a rejected request asked for happened.
        assert.isFalse(existsSync(join(server.workspace, "ran")))
        assert.isFalse(existsSync(join(server.workspace, "streamed")))
        assert.isFalse(existsSync(join(server.workspace, "up")))
        const env = yield* call(server, "/execute_action", {
          body: JSON.stringify(runAction("echo \"${AUTH_SET:-unset}\"")),
          headers: { "content-type": "application/json" }
        })
        assert.strictEqual(json(env).content, "unset")
      }))

    it.effect("path tricks do not reach a protected endpoint without the key", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (
          const path of [
            "/alive/../vscode/connection_token",
            "/server_info/../vscode/connection_token",
            "/vscode/connection_token?/alive",
            "/vscode/connection_token#/alive",
            "//vscode/connection_token",
            "/alive;/../vscode/connection_token",
            "/%61live/../vscode/connection_token",
            "/vscode/connection_token/"
          ]
        ) {
          const reply = yield* rawGet(server, path)
          assert.include([403, 404], reply.status, `${path}: ${reply.status} ${reply.body}`)
          assert.notInclude(reply.body, "token", path)
        }
      }))

    it.effect("every endpoint works with the right key", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const [name, path, options] of protectedRequests(server)) {
          const reply = yield* call(server, path, options)
          assert.strictEqual(reply.status, 200, `${name}: ${reply.text.slice(0, 300)}`)
        }
        assert.isTrue(existsSync(join(server.workspace, "ran")))
        assert.isTrue(existsSync(join(server.workspace, "streamed")))
        assert.isTrue(existsSync(join(server.workspace, "up/uploaded.txt")))
      }))
  })

  // OpenHands tests the key for truth (`if SESSION_API_KEY:`): an empty key means no authentication.
  layer(serverLayer({ key: "" }), { excludeTestServices: true })("with an empty SESSION_API_KEY", (it) => {
    it.effect("no key is required", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const reply = yield* call(server, "/vscode/connection_token", { auth: false })
        assert.strictEqual(reply.status, 200, reply.text)
        assert.deepStrictEqual(json(reply), { token: null })
      }))
  })
})
