/**
 * The HTTP client's side of `runStream`: it reads the server's NDJSON stream
 * line by line and maps its failures as `run` does (the session key sent, a 4xx
 * its own typed error, a server failure or a cut stream a disconnect), against a
 * scripted server so each failure happens exactly.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import {
  type ActionEvent,
  CmdRunAction,
  RuntimeDisconnectedError,
  RuntimeRequestError,
  type RuntimeShape
} from "../../src/index.ts"
import { clientRuntime } from "./clientRuntime.ts"

const OBSERVATION = {
  observation: "run",
  content: "hi",
  extras: { command: "echo hi", metadata: { exit_code: 0 }, hidden: false }
}

/** A server answering `/v1/execute_action/stream` with `status` and `lines` (then closing), recording headers. */
const scripted = (status: number, lines: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ close: () => void; baseUrl: string; headers: Array<IncomingHttpHeaders> }>((resolve) => {
        const headers: Array<IncomingHttpHeaders> = []
        const server = createServer((req, res) => {
          headers.push(req.headers)
          req.resume()
          req.on("end", () => {
            res.writeHead(status, { "content-type": status === 200 ? "application/x-ndjson" : "application/json" })
            res.end(lines.join(""))
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            close: () => server.close(),
            baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            headers
          }))
      })
    ),
    (server) => Effect.sync(server.close)
  )

/** The events seen before the stream ended, and how it ended. */
const consume = (rt: RuntimeShape) =>
  Effect.gen(function*() {
    const seen: Array<ActionEvent> = []
    const exit = yield* rt.runStream(new CmdRunAction({ command: "echo hi" })).pipe(
      Stream.runForEach((event) => Effect.sync(() => void seen.push(event))),
      Effect.exit
    )
    return { seen, exit, error: exit._tag === "Failure" ? Effect.runSync(Effect.flip(exit)) : undefined }
  })

const line = (value: unknown) => `${JSON.stringify(value)}\n`

describe("ActionClient: runStream over HTTP", () => {
  it.live("reads output lines then the observation, sending the session key", () =>
    Effect.gen(function*() {
      const server = yield* scripted(200, [
        line({ type: "output", text: "h" }),
        line({ type: "output", text: "i\r\n" }),
        line({ type: "observation", observation: OBSERVATION })
      ])
      const { seen, exit } = yield* consume(yield* clientRuntime(server.baseUrl, "key-for-the-stream"))
      assert.strictEqual(exit._tag, "Success")
      assert.deepStrictEqual(seen.map((e) => e._tag === "Output" ? e.text : e.observation.content), [
        "h",
        "i\r\n",
        "hi"
      ])
      assert.strictEqual(server.headers[0]!["x-session-api-key"], "key-for-the-stream")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.live("a server without the endpoint (404) is a RuntimeRequestError; the runtime stays READY", () =>
    Effect.gen(function*() {
      const server = yield* scripted(404, [line({ detail: "Not Found" })])
      const rt = yield* clientRuntime(server.baseUrl, "key-for-the-stream")
      const { error } = yield* consume(rt)
      assert.instanceOf(error, RuntimeRequestError)
      assert.strictEqual(
        error!.message,
        `The action server at ${server.baseUrl} has no POST /v1/execute_action/stream (an OpenHands or older ` +
          "server): it cannot stream output; run still works."
      )
      assert.strictEqual(yield* rt.currentStatus, "READY")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.live("a refused key (401) is a RuntimeRequestError with the server's detail", () =>
    Effect.gen(function*() {
      const server = yield* scripted(401, [line({ detail: "Invalid or missing X-Session-API-Key header" })])
      const { error } = yield* consume(yield* clientRuntime(server.baseUrl, "key-for-the-stream"))
      assert.instanceOf(error, RuntimeRequestError)
      assert.strictEqual((error as RuntimeRequestError).status, 401)
      assert.strictEqual(error!.message, "Invalid or missing X-Session-API-Key header")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.live("the server's error event is a disconnect, after the output already sent", () =>
    Effect.gen(function*() {
      const server = yield* scripted(200, [
        line({ type: "output", text: "partial" }),
        line({ type: "error", detail: "bash exited with code 1 while starting." })
      ])
      const rt = yield* clientRuntime(server.baseUrl, "key-for-the-stream")
      const { seen, error } = yield* consume(rt)
      assert.deepStrictEqual(seen.map((e) => e._tag === "Output" ? e.text : "?"), ["partial"])
      assert.instanceOf(error, RuntimeDisconnectedError)
      assert.strictEqual(
        error!.message,
        `The action server at ${server.baseUrl} stopped answering (execute_action/stream): HTTP 500 bash exited ` +
          "with code 1 while starting.. Its session is lost; start a new runtime."
      )
      assert.strictEqual(yield* rt.currentStatus, "ERROR_RUNTIME_DISCONNECTED")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))

  it.live("a stream cut before the observation, or a line that is not JSON, is a disconnect", () =>
    Effect.gen(function*() {
      for (
        const [lines, why] of [
          [[line({ type: "output", text: "x" })], "the stream ended before the observation"],
          [["{not json\n"], "the server sent a line that is not JSON"]
        ] as const
      ) {
        const server = yield* scripted(200, lines)
        const { error } = yield* consume(yield* clientRuntime(server.baseUrl, "key-for-the-stream"))
        assert.instanceOf(error, RuntimeDisconnectedError)
        assert.include(error!.message, `(execute_action/stream): ${why}.`)
      }
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici)))
})
