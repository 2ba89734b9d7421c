/** `listTools` over HTTP against stand-in servers: one without the endpoint, one sending a bad list. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { Runtime, RuntimeDisconnectedError, RuntimeRequestError } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

/** A loopback server answering `/alive`, and `GET /v1/mcp/tools` with `tools` (404 when undefined). */
const standIn = (tools: { readonly status: number; readonly body: unknown } | undefined) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
        const server = createServer((req, res) => {
          const reply = req.url === "/alive"
            ? { status: 200, body: { status: "ok" } }
            : req.url === "/v1/mcp/tools" && tools !== undefined
            ? tools
            : { status: 404, body: { detail: "Not Found" } }
          res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body))
        }).listen(0, "127.0.0.1", () => {
          const { port } = server.address() as { port: number }
          resolve({
            url: `http://127.0.0.1:${port}`,
            close: () => new Promise((done) => server.close(() => done()))
          })
        })
      })
    ),
    (s) => Effect.promise(s.close)
  )

const attachTo = <A, E>(url: string, f: (rt: Runtime["Service"]) => Effect.Effect<A, E>) =>
  Effect.provide(Runtime.use(f), Layer.fresh(LocalRuntime.connect({ url })))

describe("listTools over HTTP", () => {
  it.live("a server without GET /v1/mcp/tools is a RuntimeRequestError, and the runtime stays READY", () =>
    Effect.gen(function*() {
      const { url } = yield* standIn(undefined)
      yield* attachTo(url, (rt) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(rt.listTools)
          assert.instanceOf(error, RuntimeRequestError)
          assert.strictEqual(error.status, 404)
          assert.include(error.message, `${url} has no GET /v1/mcp/tools`)
          assert.strictEqual(yield* rt.currentStatus, "READY")
        }))
    }).pipe(Effect.scoped))

  it.live("a tool list that is not one is a RuntimeDisconnectedError", () =>
    Effect.gen(function*() {
      const { url } = yield* standIn({ status: 200, body: { tools: [{ server: "s", name: 1 }] } })
      yield* attachTo(url, (rt) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(rt.listTools)
          assert.instanceOf(error, RuntimeDisconnectedError)
          assert.include(error.message, "the server sent an invalid tool list")
          assert.strictEqual(yield* rt.currentStatus, "ERROR_RUNTIME_DISCONNECTED")
        }))
    }).pipe(Effect.scoped))

  it.live("a valid list is decoded, description defaulting to \"\"", () =>
    Effect.gen(function*() {
      const tool = { server: "s", name: "t", inputSchema: { type: "object" } }
      const { url } = yield* standIn({ status: 200, body: { tools: [tool] } })
      yield* attachTo(url, (rt) =>
        Effect.gen(function*() {
          const [listed, ...rest] = yield* rt.listTools
          assert.deepStrictEqual(rest, [])
          assert.deepStrictEqual({ ...listed }, { ...tool, description: "" })
        }))
    }).pipe(Effect.scoped))
})
