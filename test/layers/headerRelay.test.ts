/**
 * The loopback relay to a provider's authenticated proxy (provisioned/headerRelay.ts), against a plain
 * HTTP server standing for the proxy: requests and WebSockets arrive at the target's path prefix,
 * with the target's host and origin and the added header; another site's page is refused; the
 * relay listens on 127.0.0.1 only, and closing its scope ends it and its open WebSockets.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope } from "effect"
import { createServer, type IncomingHttpHeaders, request } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { headerRelay } from "../../src/provisioned/headerRelay.ts"

/** The stand-in proxy: answers each request with its path and headers; echoes an upgraded connection's bytes. */
const target = Effect.acquireRelease(
  Effect.promise(async () => {
    const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = []
    const upgraded = new Set<Socket>()
    const server = createServer((req, res) => {
      seen.push({ path: req.url ?? "", headers: req.headers })
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url }))
    })
    server.on("upgrade", (req, socket: Socket) => {
      seen.push({ path: req.url ?? "", headers: req.headers })
      upgraded.add(socket)
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
      socket.pipe(socket)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { server, seen, upgraded, port: (server.address() as AddressInfo).port }
  }),
  ({ server, upgraded }) =>
    Effect.promise(() => {
      for (const socket of upgraded) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

/** An upgrade to `url`: resolves with the connected socket. */
const upgrade = (url: string, origin: string) =>
  new Promise<{ status: number; socket: Socket | undefined }>((resolve, reject) => {
    const req = request(url, { headers: { connection: "Upgrade", upgrade: "echo", origin } })
    req.on("upgrade", (answer, socket: Socket) => resolve({ status: answer.statusCode ?? 0, socket }))
    req.on("response", (answer) => resolve({ status: answer.statusCode ?? 0, socket: undefined }))
    req.on("error", reject)
    req.end()
  })

it.live("requests and WebSockets reach the target's prefix with its host, origin and the header; others' pages are refused", () =>
  Effect.gen(function*() {
    const upstream = yield* target
    const scope = yield* Scope.make()
    const relay = yield* headerRelay(`http://127.0.0.1:${upstream.port}/8001-key`, {
      "x-runloop-tunnel-authorization": Redacted.make("Bearer tunnel-token")
    }).pipe(Scope.provide(scope))
    assert.match(relay, /^http:\/\/127\.0\.0\.1:\d+$/)

    const answer = yield* Effect.promise(() =>
      fetch(`${relay}/stable/file?x=1`, { headers: { origin: relay } }).then((r) => r.json())
    )
    assert.deepStrictEqual(answer, { path: "/8001-key/stable/file?x=1" })
    const first = upstream.seen[0]!
    assert.strictEqual(first.headers.host, `127.0.0.1:${upstream.port}`)
    assert.strictEqual(first.headers.origin, `http://127.0.0.1:${upstream.port}`)
    assert.strictEqual(first.headers["x-runloop-tunnel-authorization"], "Bearer tunnel-token")

    const refused = yield* Effect.promise(() =>
      fetch(`${relay}/`, { headers: { origin: "https://elsewhere.example" } })
    )
    assert.strictEqual(refused.status, 403)
    assert.strictEqual(
      (yield* Effect.promise(() => upgrade(`${relay}/socket`, "https://elsewhere.example"))).status,
      403
    )
    assert.strictEqual(upstream.seen.length, 1)

    const { socket, status } = yield* Effect.promise(() => upgrade(`${relay}/socket`, relay))
    assert.strictEqual(status, 101)
    assert.strictEqual(upstream.seen[1]!.path, "/8001-key/socket")
    assert.strictEqual(upstream.seen[1]!.headers["x-runloop-tunnel-authorization"], "Bearer tunnel-token")
    const echoed = yield* Effect.promise(() =>
      new Promise<string>((resolve) => {
        socket!.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")))
        socket!.write("ping")
      })
    )
    assert.strictEqual(echoed, "ping")

    // Closing the scope ends the open WebSocket and the listener.
    const ended = new Promise<void>((resolve) => socket!.on("close", () => resolve()))
    yield* Scope.close(scope, Exit.void)
    yield* Effect.promise(() => ended)
    const after = yield* Effect.promise(() => fetch(relay).then(() => "answered", (e: Error) => String(e.cause)))
    assert.include(after, "ECONNREFUSED")
  }).pipe(Effect.scoped))
