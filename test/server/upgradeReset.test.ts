/**
 * A client on the network without the key, against the proxies that take WebSockets (the VS Code
 * token proxy in the action server, the loopback header relay in the user's process): it asks for
 * an upgrade it is refused and resets the connection instead of reading the answer, as a killed
 * browser does. Once upgraded, a socket is no longer the HTTP server's to watch; an `error` nobody
 * listens for would end the process (vitest fails the run on it). The proxy answers the next
 * request as before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { headerRelay } from "../../src/provisioned/headerRelay.ts"
import { makeTokenProxy } from "../../src/server/vscode/tokenProxy.ts"

/** Ask `port` for an upgrade, wait for the first bytes of the answer (the refusal), then reset. */
const resetRefusedUpgrade = (port: number, origin: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const client = connect(port, "127.0.0.1")
      client.on("error", reject)
      client.write(
        `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${origin}\r\nConnection: Upgrade\r\n` +
          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
      )
      client.once("data", (chunk) => {
        client.resetAndDestroy()
        client.once("close", () => resolve(chunk.toString().split("\r\n")[0]!))
      })
    })
  )

const listening = (server: Server) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
      )
    ),
    () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

describe("a refused upgrade whose client resets", () => {
  it.live("the VS Code token proxy refuses it, and answers the next request", () =>
    Effect.gen(function*() {
      const proxy = makeTokenProxy("a-token-of-the-ide", "/nonexistent/vscode.sock")
      const port = yield* listening(proxy)
      for (let i = 0; i < 20; i++) {
        assert.strictEqual(yield* resetRefusedUpgrade(port, `http://127.0.0.1:${port}`), "HTTP/1.1 403 Forbidden")
      }
      const next = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`))
      assert.strictEqual(next.status, 403)
    }).pipe(Effect.scoped))

  it.live("the header relay refuses another site's, and answers the next request", () =>
    Effect.gen(function*() {
      const target = createServer((_request, response) => response.end("target"))
      const targetPort = yield* listening(target)
      const relay = yield* headerRelay(`http://127.0.0.1:${targetPort}/`, { "x-key": Redacted.make("k") })
      const port = Number(new URL(relay).port)
      for (let i = 0; i < 20; i++) {
        assert.strictEqual(yield* resetRefusedUpgrade(port, "http://elsewhere.example"), "HTTP/1.1 403 Forbidden")
      }
      const next = yield* Effect.promise(() => fetch(`${relay}/`, { headers: { origin: relay } }))
      assert.strictEqual(yield* Effect.promise(() => next.text()), "target")
    }).pipe(Effect.scoped))
})
