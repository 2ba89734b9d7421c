/**
 * The client's lean `/execute_action` (src/client/leanClient.ts): with the default HTTP client it
 * sends over a connection of its own, the same header lines as Effect's client (but the trace
 * ids), and gets the same answers and typed errors; a client the user provided carries every
 * request, actions included, and Effect's client carries an action with undici's options set around it. A plain Node server stands in for the action server and records what
 * reaches it.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { layerHttpClient, makeActionClient, withServerHeaders } from "../../src/client/ActionClient.ts"
import { CmdRunAction } from "../../src/index.ts"
import { makeStatus } from "../../src/runtime/statusCell.ts"
import { toolCapabilities } from "../../src/serverStart/serverTools.ts"

const OBSERVATION = JSON.stringify({
  observation: "run",
  content: "hi",
  extras: { command: "echo hi", metadata: { exit_code: 0 }, hidden: false }
})

interface Seen {
  readonly url: string | undefined
  readonly rawHeaders: ReadonlyArray<string>
  readonly port: number | undefined
}

/** A server that records each request and answers with `answer` (default: one observation). */
const recordingServer = (
  answer: (request: IncomingMessage, response: ServerResponse) => void = (_, response) =>
    response.writeHead(200, { "content-type": "application/json" }).end(OBSERVATION)
) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const seen: Array<Seen> = []
      const server = createServer((request, response) => {
        seen.push({ url: request.url, rawHeaders: request.rawHeaders, port: request.socket.remotePort })
        request.resume()
        request.on("end", () => answer(request, response))
      })
      return new Promise<{ seen: typeof seen; url: string; close: () => void }>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve({
            seen,
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            close: () => {
              server.close()
              server.closeAllConnections()
            }
          }))
      )
    }),
    (server) => Effect.sync(server.close)
  )

const client = (baseUrl: string) =>
  Effect.gen(function*() {
    return yield* makeActionClient({
      baseUrl,
      sessionApiKey: Redacted.make("lean-client-key"),
      info: {
        id: "lean",
        kind: "test",
        workspace: "/w",
        urls: {},
        capabilities: toolCapabilities({}, { pause: false })
      },
      defaultTimeoutSeconds: 5,
      status: yield* makeStatus,
      retrySchedule: Schedule.recurs(1)
    })
  })

/** The default client (the runtimes'), and a client a user provided (Effect's own, unmarked). */
const DEFAULT = layerHttpClient
const USERS = NodeHttpClient.layerUndici

const action = new CmdRunAction({ command: "echo hi" })

/** A request's header lines, the trace ids blanked. */
const headerLines = (raw: ReadonlyArray<string>) => {
  const lines: Array<string> = []
  for (let i = 0; i < raw.length; i += 2) {
    lines.push(`${raw[i]}: ${raw[i + 1]!.replace(/[0-9a-f]{16,32}/g, "<id>")}`)
  }
  return lines
}

describe("the lean /execute_action client", () => {
  it.live("the default client: the same header lines, proxy headers included, on a connection of its own", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer()
      const proxy = withServerHeaders({ "x-proxy-token": Redacted.make("proxy-secret") })
      const sent = (layer: Layer.Layer<HttpClient.HttpClient>) =>
        Effect.gen(function*() {
          const backend = yield* client(server.url)
          yield* backend.setEnv({ A: "1" }, [])
          const observation = yield* backend.execute(action)
          assert.strictEqual(observation.content, "hi")
          yield* backend.execute(action)
        }).pipe(proxy, Effect.scoped, Effect.provide(layer))
      yield* sent(DEFAULT)
      const lean = server.seen.splice(0)
      yield* sent(USERS)
      const effects = server.seen.splice(0)
      assert.deepStrictEqual(lean.map((s) => s.url), ["/v1/env", "/execute_action", "/execute_action"])
      assert.deepStrictEqual(headerLines(lean[1]!.rawHeaders), headerLines(effects[1]!.rawHeaders))
      assert.deepStrictEqual(headerLines(lean[1]!.rawHeaders), [
        `host: ${server.url.slice("http://".length)}`,
        "connection: keep-alive",
        "content-type: application/json",
        "x-proxy-token: proxy-secret",
        "x-session-api-key: lean-client-key",
        "b3: <id>-<id>-1-<id>",
        "traceparent: 00-<id>-<id>-01",
        `content-length: ${lean[1]!.rawHeaders.at(-1)}`
      ])
      // The actions go over a pool of their own, not the connection the other endpoints use.
      assert.notInclude([lean[1]!.port, lean[2]!.port], lean[0]!.port)
    }).pipe(Effect.scoped))

  it.live("a client the user provided carries the actions too", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer()
      const marked = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(HttpClient.HttpClient, HttpClient.mapRequest(HttpClientRequest.setHeader("x-users-client", "1")))
      ).pipe(Layer.provide(DEFAULT))
      yield* Effect.gen(function*() {
        const backend = yield* client(server.url)
        yield* backend.execute(action)
      }).pipe(Effect.scoped, Effect.provide(marked))
      assert.deepStrictEqual(server.seen.map((s) => [s.url, s.rawHeaders.includes("x-users-client")]), [
        ["/execute_action", true]
      ])
    }).pipe(Effect.scoped))

  it.live("undici's request options set around an action reach it (Effect's client carries it)", () =>
    Effect.gen(function*() {
      const server = yield* recordingServer()
      yield* Effect.gen(function*() {
        const backend = yield* client(server.url)
        yield* backend.execute(action)
        yield* backend.execute(action).pipe(Effect.provideService(NodeHttpClient.UndiciOptions, { reset: true }))
      }).pipe(Effect.scoped, Effect.provide(DEFAULT))
      // `reset`: undici asks the server to close the connection after the request.
      assert.deepStrictEqual(
        server.seen.map((s) => headerLines(s.rawHeaders).find((line) => line.startsWith("connection:"))),
        ["connection: keep-alive", "connection: close"]
      )
    }).pipe(Effect.scoped))

  it.live("the same answers and typed errors as Effect's client", () =>
    Effect.gen(function*() {
      const answers: ReadonlyArray<readonly [string, (request: IncomingMessage, response: ServerResponse) => void]> = [
        ["an observation", (_, r) => r.writeHead(200, { "content-type": "application/json" }).end(OBSERVATION)],
        ["503", (_, r) => r.writeHead(503, { "content-type": "application/json" }).end(`{"detail":"gone"}`)],
        ["404", (_, r) => r.writeHead(404).end("Not Found")],
        ["403", (_, r) => r.writeHead(403, { "content-type": "application/json" }).end(`{"detail":"Invalid API Key"}`)],
        ["400", (_, r) => r.writeHead(400, { "content-type": "application/json" }).end(`{"detail":"bad action"}`)],
        ["429 then 200", (_, r) => r.writeHead(429).end()],
        ["not JSON", (_, r) => r.writeHead(200).end("<html>")],
        ["no observation", (_, r) => r.writeHead(200).end(`{"observation":"fly"}`)],
        ["an empty body", (_, r) => r.writeHead(200).end()],
        ["a cut connection", (request) => request.socket.destroy()],
        ["a body cut short", (_, r) => {
          r.writeHead(200, { "content-length": "100" }).write("{\"observation\"")
          r.socket?.destroy()
        }]
      ]
      for (const [what, answer] of answers) {
        const server = yield* recordingServer(answer)
        const outcome = (layer: Layer.Layer<HttpClient.HttpClient>) =>
          Effect.gen(function*() {
            const backend = yield* client(server.url)
            return yield* Effect.match(backend.execute(action), {
              onSuccess: (observation) => `ok ${observation._tag} ${observation.content}`,
              onFailure: (error) => `${error._tag} ${error.message.replace(server.url, "<url>")}`
            })
          }).pipe(Effect.scoped, Effect.provide(layer))
        const lean = yield* outcome(DEFAULT)
        assert.strictEqual(lean, yield* outcome(USERS), what)
      }
      const closed = yield* recordingServer()
      closed.close()
      const refused = (layer: Layer.Layer<HttpClient.HttpClient>) =>
        Effect.flip(Effect.flatMap(client(closed.url), (backend) => backend.execute(action))).pipe(
          Effect.map((error) => `${error._tag} ${error.message.replace(closed.url, "<url>")}`),
          Effect.scoped,
          Effect.provide(layer)
        )
      assert.strictEqual(yield* refused(DEFAULT), yield* refused(USERS), "connection refused")
    }).pipe(Effect.scoped))
})
