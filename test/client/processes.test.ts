/** `spawn` over HTTP against stand-in servers: one without `/v1/processes`, one answering on script. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { createServer } from "node:http"
import { ProcessError, Runtime, RuntimeDisconnectedError } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

/** Raw answers by `METHOD path`; `/alive` is always ok, anything else 404 as FastAPI answers. */
type Answers = Readonly<Record<string, { readonly status: number; readonly body: string }>>

const standIn = (answers: Answers) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; close: () => Promise<void> }>((resolve) => {
        const server = createServer((req, res) => {
          const reply = req.url === "/alive"
            ? { status: 200, body: "{\"status\":\"ok\"}" }
            : answers[`${req.method} ${req.url}`] ?? { status: 404, body: "{\"detail\":\"Not Found\"}" }
          res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body)
        }).listen(0, "127.0.0.1", () => {
          const { port } = server.address() as { port: number }
          resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((done) => server.close(() => done())) })
        })
      })
    ),
    (s) => Effect.promise(s.close)
  )

const attached = (url: string) => Layer.fresh(LocalRuntime.connect({ url }))

const started = { status: 200, body: "{\"id\":\"7\",\"pid\":70}" }
const removed = { status: 200, body: "{\"detail\":\"OK\"}" }

describe("background processes over HTTP (client)", () => {
  it.live("a server without /v1/processes (OpenHands') refuses spawn with a ProcessError; the runtime stays READY", () =>
    Effect.gen(function*() {
      const { url } = yield* standIn({})
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        const error = yield* Effect.flip(Effect.scoped(rt.spawn("sleep 1")))
        assert.instanceOf(error, ProcessError)
        assert.strictEqual(
          error.message,
          `The action server at ${url} has no POST /v1/processes (an OpenHands or older server): ` +
            "it cannot run background processes."
        )
        assert.strictEqual(yield* rt.currentStatus, "READY")
      }).pipe(Effect.provide(attached(url)))
    }).pipe(Effect.scoped))

  it.live("decodes the NDJSON output up to the exit line; a line that is not one is a RuntimeDisconnectedError", () =>
    Effect.gen(function*() {
      const lines = [
        { type: "output", stream: "stdout", text: "a\n" },
        { type: "output", stream: "stderr", text: "b\n" },
        { type: "exit", exitCode: 0, signal: null }
      ].map((line) => JSON.stringify(line)).join("\n")
      const { url } = yield* standIn({
        "POST /v1/processes": started,
        "GET /v1/processes/7/output": { status: 200, body: `${lines}\n` },
        "GET /v1/processes/7/wait": { status: 200, body: "{\"exitCode\":0,\"signal\":null}" },
        "DELETE /v1/processes/7": removed
      })
      yield* Effect.gen(function*() {
        const handle = yield* (yield* Runtime).spawn("x")
        assert.strictEqual(handle.pid, 70)
        assert.deepStrictEqual(yield* Stream.runCollect(handle.output), [
          { stream: "stdout", text: "a\n" },
          { stream: "stderr", text: "b\n" }
        ])
        assert.deepStrictEqual(yield* handle.wait, { exitCode: 0, signal: null })
      }).pipe(Effect.scoped, Effect.provide(attached(url)))

      const broken = yield* standIn({
        "POST /v1/processes": started,
        "GET /v1/processes/7/output": { status: 200, body: "{\"type\":\"output\",\"stream\":\"stdin\",\"text\":1}\n" },
        "DELETE /v1/processes/7": removed
      })
      yield* Effect.gen(function*() {
        const rt = yield* Runtime
        const error = yield* Effect.flip(Stream.runCollect((yield* rt.spawn("x")).output))
        assert.instanceOf(error, RuntimeDisconnectedError)
        assert.include(error.message, "the server sent an invalid output line")
      }).pipe(Effect.scoped, Effect.provide(attached(broken.url)))
    }).pipe(Effect.scoped))
})
