/**
 * Malformed requests get a 4xx whose `detail` says what was wrong, and none of
 * them hurts the server or the session: /alive answers after each, and the
 * shell keeps its variables and working directory.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { zipSync } from "fflate"
import { existsSync } from "node:fs"
import { join } from "node:path"
import {
  assertAlive,
  call,
  type CallOptions,
  fileForm,
  json,
  postJson,
  type Reply,
  run,
  runAction,
  serverLayer,
  TestServer,
  type TestServerShape
} from "./helpers.ts"

interface Case {
  readonly name: string
  readonly send: (server: TestServerShape) => Effect.Effect<Reply, unknown>
  /** Accepted statuses (the first is the expected one). */
  readonly status: ReadonlyArray<number>
  /** A substring of `detail` naming the problem (case-insensitive). */
  readonly detail: string
  /** Extra checks that the request had no effect. */
  readonly nothingHappened?: (server: TestServerShape) => void
}

const post =
  (path: string, body: string | (() => string), headers: Record<string, string> = {}) => (server: TestServerShape) =>
    call(server, path, {
      method: "POST",
      body: typeof body === "string" ? body : body(),
      headers: { "content-type": "application/json", ...headers }
    })
const action = (value: unknown) => post("/execute_action", JSON.stringify(value))
const run_ = (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  action({ action: { action: "run", args, ...extra } })
const upload = (query: Record<string, string>, options: () => CallOptions) => (server: TestServerShape) => {
  const params = new URLSearchParams({ destination: join(server.workspace, "uploads"), ...query })
  return call(server, `/upload_file?${params}`, { method: "POST", ...options() })
}
const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const huge = () => JSON.stringify(runAction(`echo ${"a".repeat(65 * 1024 * 1024)}`))
const noUploads = (server: TestServerShape) => assert.isFalse(existsSync(join(server.workspace, "uploads")))

const cases: ReadonlyArray<Case> = [
  // POST /execute_action
  { name: "not JSON", send: post("/execute_action", "run echo hi"), status: [400], detail: "not valid JSON" },
  { name: "empty body", send: post("/execute_action", ""), status: [400], detail: "empty" },
  { name: "whitespace body", send: post("/execute_action", " \n\t "), status: [400], detail: "empty" },
  { name: "a JSON array", send: action([runAction("echo hi")]), status: [400], detail: "{\"action\"" },
  { name: "{} without \"action\"", send: action({}), status: [400], detail: "{\"action\"" },
  { name: "\"action\" is a string", send: action({ action: "run" }), status: [400], detail: "\"action\" field" },
  {
    name: "unknown action type",
    send: action({ action: { action: "teleport", args: {} } }),
    status: [400],
    detail: "Unknown action type \"teleport\""
  },
  { name: "command: 5", send: run_({ command: 5 }), status: [400], detail: "command" },
  { name: "timeout: \"x\"", send: run_({ command: "ls" }, { timeout: "x" }), status: [400], detail: "timeout" },
  { name: "is_input: \"yes\"", send: run_({ command: "ls", is_input: "yes" }), status: [400], detail: "is_input" },
  { name: "missing command", send: run_({}), status: [400], detail: "command" },
  { name: "negative timeout", send: run_({ command: "ls" }, { timeout: -5 }), status: [400], detail: "greater than 0" },
  {
    name: "args is a list",
    send: action({ action: { action: "run", args: ["ls"] } }),
    status: [400],
    detail: "\"args\" of action \"run\" must be a JSON object"
  },
  {
    name: "write without content",
    send: action({ action: { action: "write", args: { path: "/tmp/x" } } }),
    status: [400],
    detail: "content"
  },
  { name: "body over the 32 MiB limit", send: post("/execute_action", huge), status: [413], detail: "too large" },
  {
    name: "unicode garbage",
    send: post("/execute_action", "\uFEFF\u0000\uD800\u202E{\"action\u00FF\uFFFF"),
    status: [400],
    detail: "not valid JSON"
  },
  {
    name: "deeply nested JSON",
    send: post("/execute_action", () => `{"action":{"action":"run","args":{"command":${deep(50_000)}}}}`),
    status: [400],
    detail: "nested deeper than the limit of 128 levels"
  },
  {
    name: "a 100000-deep array",
    send: post("/execute_action", deep(100_000)),
    status: [400],
    detail: "nested deeper than the limit of 128 levels"
  },
  {
    name: "a form-encoded body",
    send: post("/execute_action", "action=run&command=ls", { "content-type": "application/x-www-form-urlencoded" }),
    status: [400],
    detail: "not valid JSON"
  },
  { name: "GET /execute_action", send: (s) => call(s, "/execute_action"), status: [405, 404], detail: "not" },
  { name: "an unknown route", send: post("/execute_actions", "{}"), status: [404], detail: "not found" },
  { name: "stream: {}", send: post("/v1/execute_action/stream", "{}"), status: [400], detail: "{\"action\"" },
  // POST /list_files
  { name: "list_files: not JSON", send: post("/list_files", "{path:"), status: [400], detail: "not valid JSON" },
  { name: "list_files: path 5", send: post("/list_files", "{\"path\":5}"), status: [400], detail: "\"path\"" },
  { name: "list_files: array", send: post("/list_files", "[\"/tmp\"]"), status: [400], detail: "\"path\"" },
  {
    name: "list_files: chunked body with path 5",
    send: (s) =>
      call(s, "/list_files", {
        method: "POST",
        body: new Blob(["{\"path\":5}"]).stream(),
        headers: { "content-type": "application/json" }
      }),
    status: [400],
    detail: "\"path\""
  },
  // POST /upload_file
  {
    name: "upload: relative destination",
    send: upload({ destination: "uploads" }, () => ({ body: fileForm("a.txt", "a") })),
    status: [400],
    detail: "absolute",
    nothingHappened: noUploads
  },
  {
    name: "upload: JSON instead of multipart",
    send: upload({}, () => ({ body: "{\"file\":\"a\"}", headers: { "content-type": "application/json" } })),
    status: [400],
    detail: "multipart",
    nothingHappened: noUploads
  },
  {
    name: "upload: invalid multipart",
    send: upload({}, () => ({
      body: "--XYZ\r\ngarbage without headers\r\n--nope",
      headers: { "content-type": "multipart/form-data; boundary=XYZ" }
    })),
    status: [400],
    detail: "multipart",
    nothingHappened: noUploads
  },
  {
    name: "upload: no \"file\" field",
    send: upload({}, () => {
      const form = new FormData()
      form.append("other", new Blob(["x"]), "x.txt")
      return { body: form }
    }),
    status: [400],
    detail: "\"file\"",
    nothingHappened: noUploads
  },
  {
    name: "upload: recursive non-zip",
    send: upload({ recursive: "true" }, () => ({ body: fileForm("a.txt", "a") })),
    status: [400],
    detail: "Recursive uploads must be zip files",
    nothingHappened: noUploads
  },
  {
    name: "upload: corrupt zip",
    send: upload({}, () => ({ body: fileForm("bad.zip", "PK\u0003\u0004 not really a zip") })),
    status: [400],
    detail: "zip"
  },
  {
    name: "upload: zip entry escaping the destination",
    send: upload({ recursive: "true" }, () => ({
      body: fileForm("slip.zip", zipSync({ "../escaped-by-zip.txt": new TextEncoder().encode("x") }))
    })),
    status: [400],
    detail: "outside",
    nothingHappened: (s) => assert.isFalse(existsSync(join(s.workspace, "escaped-by-zip.txt")))
  },
  // POST /v1/env
  { name: "env: not JSON", send: post("/v1/env", "X=1"), status: [400], detail: "not valid JSON" },
  {
    name: "env: value not a string",
    send: post("/v1/env", "{\"vars\":{\"X\":5}}"),
    status: [400],
    detail: "{\"vars\""
  },
  { name: "env: vars a list", send: post("/v1/env", "{\"vars\":[\"X\"]}"), status: [400], detail: "{\"vars\"" },
  {
    name: "env: invalid name",
    send: post("/v1/env", "{\"vars\":{\"BAD-NAME\":\"1\"}}"),
    status: [400],
    detail: "BAD-NAME"
  },
  {
    name: "env: secrets not a list",
    send: post("/v1/env", "{\"vars\":{\"X\":\"1\"},\"secrets\":\"X\"}"),
    status: [400],
    detail: "\"secrets\" must be a list of names given in \"vars\"."
  },
  {
    name: "env: a secret name not in vars",
    send: post("/v1/env", "{\"vars\":{\"X\":\"1\"},\"secrets\":[\"Y\"]}"),
    status: [400],
    detail: "\"secrets\" must be a list of names given in \"vars\"."
  },
  { name: "env: body over the limit", send: post("/v1/env", huge), status: [413], detail: "too large" },
  // POST /update_mcp_server
  {
    name: "mcp: an object",
    send: post("/update_mcp_server", "{\"name\":\"x\"}"),
    status: [400],
    detail: "Request must be a list of MCP tools to sync"
  },
  { name: "mcp: empty body", send: post("/update_mcp_server", ""), status: [400], detail: "empty" },
  {
    name: "mcp: bad name",
    send: post("/update_mcp_server", "[{\"name\":\"a b\",\"command\":\"x\"}]"),
    status: [400],
    detail: "\"name\""
  },
  {
    name: "mcp: args not a list",
    send: post("/update_mcp_server", "[{\"name\":\"a\",\"command\":\"x\",\"args\":\"-v\"}]"),
    status: [400],
    detail: "\"args\""
  },
  {
    name: "mcp: env values not strings",
    send: post("/update_mcp_server", "[{\"name\":\"a\",\"command\":\"x\",\"env\":{\"A\":1}}]"),
    status: [400],
    detail: "\"env\""
  }
]

layer(serverLayer(), { excludeTestServices: true })("malformed requests", (it) => {
  it.effect("the session has state to keep", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* run(server, "export MARKER=kept; cd /tmp")
      assert.strictEqual((yield* run(server, "echo $MARKER $PWD")).content, "kept /tmp")
    }))

  for (const c of cases) {
    it.effect(`${c.name}: ${c.status[0]} with a detail naming the problem`, () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const reply = yield* c.send(server)
        assert.include(c.status, reply.status, `HTTP status (body: ${reply.text.slice(0, 300)})`)
        const detail = json(reply)?.detail
        assert.strictEqual(typeof detail, "string", `a "detail" string in ${reply.text.slice(0, 300)}`)
        assert.include((detail as string).toLowerCase(), c.detail.toLowerCase())
        c.nothingHappened?.(server)
        yield* assertAlive(server)
        assert.strictEqual((yield* run(server, "echo $MARKER $PWD")).content, "kept /tmp")
      }), 30_000)
  }

  it.effect("a body that is not JSON is not quoted back, not even in pieces (it may hold a secret)", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const secret = "s3c9f1e7d2b8a4c6e0f5"
      const starting = yield* postJson(server, "/v1/env", `${secret} {`)
      assert.deepStrictEqual(json(starting), { detail: "The request body is not valid JSON: Unexpected token 's'" })
      for (const body of [`{"vars": {"TOKEN": "${secret}"} x}`, `x{"vars": {"TOKEN": "${secret}"}}`]) {
        const reply = yield* postJson(server, "/v1/env", body)
        assert.strictEqual(reply.status, 400)
        assert.match(json(reply).detail, /^The request body is not valid JSON: /)
        for (let i = 0; i + 8 <= secret.length; i++) assert.notInclude(reply.text, secret.slice(i, i + 8))
      }
    }))

  it.effect("the session kept its variables and working directory", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      assert.strictEqual((yield* run(server, "echo $MARKER $PWD")).content, "kept /tmp")
      assert.strictEqual((yield* postJson(server, "/list_files", { path: "/no/such" })).status, 200)
    }))
})
