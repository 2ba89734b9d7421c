/**
 * Credentials in headers stay out of spans (src/telemetry/secretHeaders.ts): a program that turns
 * on Effect's header recording gets `<redacted>` for the session key and a provider's proxy token,
 * on the client's spans and on the action server's, and the other headers as they are (so the
 * recording was on and the test can tell).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Tracer } from "effect"
import { HttpClient, HttpMiddleware, HttpServer } from "effect/http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { withServerHeaders } from "../../src/client/ActionClient.ts"
import { CmdRunAction } from "../../src/index.ts"
import * as ActionServer from "../../src/server/ActionServer.ts"
import { clientRuntime } from "../client/clientRuntime.ts"
import { recordingTracer } from "../recordingTracer.ts"
import { tempDir } from "../server/helpers.ts"

const SESSION_KEY = "session-key-not-for-spans-5521"
const PROXY_TOKEN = "proxy-token-not-for-spans-8830"

/** A server answering every request with one `run` observation. */
const observationServer = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ close: () => void; baseUrl: string }>((resolve) => {
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({
            observation: "run",
            content: "hi",
            extras: { command: "echo hi", metadata: { exit_code: 0 }, hidden: false }
          }))
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          close: () => server.close(),
          baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        }))
    })
  ),
  (server) => Effect.sync(server.close)
)

describe("credentials in headers are redacted in spans", () => {
  it.live("the client's spans: the session key and a provider's proxy token", () =>
    Effect.gen(function*() {
      const server = yield* observationServer
      const recording = recordingTracer()
      yield* Effect.gen(function*() {
        const observation = yield* (yield* clientRuntime(server.baseUrl, SESSION_KEY)).run(
          new CmdRunAction({ command: "echo hi" })
        )
        assert.strictEqual(observation.content, "hi")
      }).pipe(
        withServerHeaders({ "x-daytona-preview-token": Redacted.make(PROXY_TOKEN) }),
        Effect.provide(NodeHttpClient.layerUndici),
        Effect.provideService(HttpClient.TracerHeaderFilter, () => true),
        Effect.withTracer(recording.tracer)
      )
      const requests = recording.attributes("client").filter((a) => a["http.request.method"] === "POST")
      assert.lengthOf(requests, 1)
      assert.strictEqual(requests[0]!["http.request.header.x-session-api-key"], "<redacted>")
      assert.strictEqual(requests[0]!["http.request.header.x-daytona-preview-token"], "<redacted>")
      assert.strictEqual(requests[0]!["http.request.header.content-type"], "application/json")
      assert.notInclude(recording.everything(), SESSION_KEY)
      assert.notInclude(recording.everything(), PROXY_TOKEN)
    }).pipe(Effect.scoped))

  it.live("the action server's spans: the session key of the requests it serves", () =>
    Effect.gen(function*() {
      const recording = recordingTracer()
      const workspace = yield* tempDir("secret-headers-")
      const served = yield* Effect.gen(function*() {
        const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
        const response = yield* Effect.promise(() =>
          fetch(`${url}/list_files`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-session-api-key": SESSION_KEY },
            body: JSON.stringify({})
          })
        )
        return response.status
      }).pipe(
        Effect.provide(
          ActionServer.layer({
            port: 0,
            host: "127.0.0.1",
            workingDir: workspace,
            sessionApiKey: Redacted.make(SESSION_KEY),
            noChangeTimeoutSeconds: 1,
            sessionId: `secret-headers-${process.pid}`,
            fileViewerUrlFile: `${workspace}/.viewer-url`
          }).pipe(
            Layer.provide(Layer.succeed(HttpMiddleware.TracerHeaderFilter)(() => true)),
            Layer.provide(Layer.succeed(Tracer.Tracer)(recording.tracer))
          )
        )
      )
      assert.strictEqual(served, 200)
      const requests = recording.attributes("server").filter((a) => a["http.request.method"] === "POST")
      assert.lengthOf(requests, 1)
      assert.strictEqual(requests[0]!["http.request.header.x-session-api-key"], "<redacted>")
      assert.strictEqual(requests[0]!["http.request.header.content-type"], "application/json")
      assert.notInclude(recording.everything(), SESSION_KEY)
    }).pipe(Effect.scoped))
})
