/** Session-key authentication (spec §2.3): `X-Session-API-Key` on every path but /alive and /server_info. */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { ENDPOINTS } from "../../src/server/routes/paths.ts"
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
    ["GET /v1/capabilities", "/v1/capabilities", {}],
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

/** A request with the target sent exactly as given (fetch and URL would normalise it). */
const rawRequest = (
  server: TestServerShape,
  method: string,
  target: string,
  options: { readonly body?: Uint8Array; readonly headers?: Record<string, string> }
) =>
  Effect.promise(() =>
    new Promise<{ readonly status: number; readonly body: string }>((resolve, reject) => {
      const url = new URL(server.baseUrl)
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: target, method, headers: options.headers ?? {} },
        (res) => {
          let body = ""
          res.setEncoding("utf8").on("data", (d: string) => (body += d)).on(
            "end",
            () => resolve({ status: res.statusCode ?? 0, body })
          )
        }
      )
      req.on("error", reject).end(options.body)
    })
  )

/**
 * Spellings of `path` that the router, WHATWG URL or a proxy could read as another path (or as
 * `path` itself): each must be refused before any handler or the key check sees it.
 */
const spellings = (path: string): Array<string> => {
  const rest = path.slice(1)
  return [
    `${path};/../alive`,
    `${path};/../server_info`,
    `${path};`,
    `${path};jsessionid=1`,
    `/alive/..${path}`,
    `/alive/%2e%2e${path}`,
    `/alive%2f..${path}`,
    `/alive/.%2e${path}`,
    `/./${rest}`,
    `${path}/.`,
    `${path}/..`,
    `${path}/../alive`,
    `/${path}`,
    `${path}//`,
    `${path}/`,
    `${path}%2f`,
    `${path}%3b`,
    `${path}%5c`,
    `${path}%00`,
    `${path}%2e`,
    `/%${rest.charCodeAt(0).toString(16)}${rest.slice(1)}`,
    path.toUpperCase(),
    `${path}\\..\\alive`,
    `/alive\\..${path}`,
    `${path}#/../alive`,
    `${path}?x=1#frag`,
    `http://127.0.0.1${path}`,
    `http://127.0.0.1/alive/..${path}`,
    `HTTP://localhost${path}`,
    `*`
  ]
}

const jsonRequest = (value: unknown) => ({
  body: new TextEncoder().encode(JSON.stringify(value)),
  headers: { "content-type": "application/json" }
})

/** A body for endpoint `name` that, if it reached the handler, would create `marker`. */
const sideEffectBody = (name: string, marker: string) =>
  Effect.promise(async (): Promise<{ readonly body?: Uint8Array; readonly headers?: Record<string, string> }> => {
    switch (name) {
      case "executeAction":
      case "executeActionStream":
        return jsonRequest(runAction(`touch ${marker}`))
      case "updateMcpServer":
        return jsonRequest([{ name: "m", command: "touch", args: [marker] }])
      case "env":
        return jsonRequest({ vars: { AUTH_SET: "yes" } })
      case "uploadFile": {
        const form = new Response(fileForm("uploaded.txt", "x"))
        return {
          body: new Uint8Array(await form.arrayBuffer()),
          headers: { "content-type": form.headers.get("content-type")! }
        }
      }
      default:
        return {}
    }
  })

describe("session key authentication", () => {
  layer(serverLayer({ key: KEY }), { excludeTestServices: true })("with a key", (it) => {
    it.effect("/alive and /server_info need no key; without it /server_info tells its clocks, no host facts", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        for (const auth of [false, "wrong"] as const) {
          const alive = yield* call(server, "/alive", { auth })
          assert.strictEqual(alive.status, 200)
          assert.deepStrictEqual(json(alive), { status: "ok" })
          const info = yield* call(server, "/server_info", { auth })
          assert.strictEqual(info.status, 200)
          assert.deepStrictEqual(Object.keys(json(info)), ["uptime", "idle_time"])
          assert.notInclude(info.text, "disk")
        }
        const keyed = json(yield* call(server, "/server_info"))
        assert.deepStrictEqual(Object.keys(keyed), ["uptime", "idle_time", "resources"])
        assert.deepStrictEqual(Object.keys((keyed["resources"] as Record<string, unknown>)["disk"] as object), [
          "total",
          "used",
          "free",
          "percent"
        ])
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

    it.effect("the reported bypass, POST /execute_action;/../alive without the key, runs nothing", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const marker = join(server.workspace, "bypassed")
        const reply = yield* rawRequest(server, "POST", "/execute_action;/../alive", {
          body: new TextEncoder().encode(JSON.stringify(runAction(`touch ${marker}`))),
          headers: { "content-type": "application/json" }
        })
        assert.isFalse(existsSync(marker), "the command ran without the key")
        assert.strictEqual(reply.status, 400, reply.body)
        assert.deepStrictEqual(JSON.parse(reply.body), {
          detail:
            "Ambiguous request path: the character \";\" is not allowed in the path. Send the path in its plain form, e.g. /execute_action."
        })
      }))

    it.effect("every ambiguous spelling of every endpoint is refused with 400, with or without the key", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const marker = (name: string) => join(server.workspace, `reached-${name}`)
        for (const [name, [method, path]] of Object.entries(ENDPOINTS)) {
          const body = yield* sideEffectBody(name, marker(name))
          for (const spelling of spellings(path)) {
            // An upload names its destination in the query.
            const target = name === "uploadFile" && !/[?#]/.test(spelling)
              ? `${spelling}?destination=${encodeURIComponent(marker(name))}`
              : spelling
            for (const key of [undefined, KEY]) {
              const reply = yield* rawRequest(server, method, target, {
                ...body,
                ...(key === undefined ? {} : { headers: { ...body.headers, "x-session-api-key": key } })
              })
              const what = `${method} ${JSON.stringify(target)} (${key === undefined ? "no key" : "key"})`
              assert.strictEqual(reply.status, 400, `${what}: ${reply.body.slice(0, 300)}`)
              assert.match(JSON.parse(reply.body).detail, /^Ambiguous request path: /, what)
            }
          }
        }
        // No refused request reached a handler: no command ran, no file was uploaded, no MCP server started.
        for (const name of Object.keys(ENDPOINTS)) assert.isFalse(existsSync(marker(name)), name)
        const env = yield* call(server, "/execute_action", post(runAction("echo \"${AUTH_SET:-unset}\"")))
        assert.strictEqual(json(env).content, "unset")
      }))

    it.effect("the plain spellings still work: with the key everywhere, without it only /alive and /server_info", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        assert.strictEqual((yield* rawRequest(server, "GET", "/alive", {})).status, 200)
        assert.strictEqual((yield* rawRequest(server, "GET", "/server_info?x=1", {})).status, 200)
        assert.strictEqual((yield* rawRequest(server, "GET", "/vscode/connection_token", {})).status, 403)
        const withKey = { headers: { "x-session-api-key": KEY } }
        assert.strictEqual((yield* rawRequest(server, "GET", "/vscode/connection_token", withKey)).status, 200)
        assert.strictEqual((yield* rawRequest(server, "GET", "/no-such.route", withKey)).status, 404)
        assert.strictEqual((yield* rawRequest(server, "GET", "/execute_action", withKey)).status, 405)
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
