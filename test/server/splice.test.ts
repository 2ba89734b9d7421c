/**
 * The splice every WebSocket hand-over uses (src/server/splice.ts), between real sockets: bytes
 * both ways, an upstream's last answer delivered before the browser's side closes, a refused
 * connect closing the browser's side, and `onClosed` once both sides are closed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { connect, createServer, type Server, type Socket } from "node:net"
import { splice } from "../../src/server/splice.ts"

/** A TCP server on 127.0.0.1 running `onConnection` for each connection, closed with the scope. */
const listening = (onConnection: (socket: Socket) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ server: Server; port: number }>((resume) => {
      const server = createServer(onConnection)
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ server, port: (server.address() as { port: number }).port })))
    }),
    ({ server }) =>
      Effect.sync(() =>
        server.close()
      )
  )

/**
 * A "browser" connected to a front server whose connections are spliced to `upstreamPort`: the
 * browser's socket, everything it received by the time it closed, and `onClosed`'s signal.
 */
const throughSplice = (upstreamPort: number) =>
  Effect.gen(function*() {
    const bothClosed = yield* Deferred.make<void>()
    const front = yield* listening((socket) =>
      splice(socket, connect(upstreamPort, "127.0.0.1"), () => Deferred.doneUnsafe(bothClosed, Effect.void))
    )
    const browser = connect(front.port, "127.0.0.1")
    const received: Array<Buffer> = []
    // A slow reader: for its first 300 ms the answer piles up in the front's socket.
    browser.pause()
    setTimeout(() => browser.resume(), 300)
    browser.on("data", (chunk: Buffer) => received.push(chunk))
    const ended = Effect.callback<string>((resume) => {
      browser.once("close", () => resume(Effect.succeed(Buffer.concat(received).toString())))
    })
    return { browser, ended, bothClosed: Deferred.await(bothClosed) }
  })

/** A port nothing listens on (bound, read, released). */
const closedPort = Effect.gen(function*() {
  const { port, server } = yield* Effect.scoped(listening(() => {}))
  yield* Effect.callback<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    server.once("close", () => resume(Effect.void))
  })
  return port
})

describe("splice", () => {
  it.live("carries bytes both ways; the browser closing closes the upstream, then onClosed runs", () =>
    Effect.gen(function*() {
      const upstreamClosed = yield* Deferred.make<void>()
      const upstream = yield* listening((socket) => {
        socket.on("data", (chunk) => socket.write(`echo:${chunk}`))
        socket.on("close", () => Deferred.doneUnsafe(upstreamClosed, Effect.void))
      })
      const { browser, bothClosed } = yield* throughSplice(upstream.port)
      const answer = yield* Effect.callback<string>((resume) => {
        browser.once("data", (chunk) => resume(Effect.succeed(chunk.toString())))
        browser.write("ping")
      })
      assert.strictEqual(answer, "echo:ping")
      browser.destroy()
      yield* Deferred.await(upstreamClosed)
      yield* bothClosed
    }).pipe(Effect.scoped, Effect.timeout("10 seconds")))

  it.live("an upstream that answers and ends: the whole answer reaches the browser before it closes", () =>
    Effect.gen(function*() {
      const answer = `HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n${"x".repeat(8 * 1024 * 1024)}`
      const upstream = yield* listening((socket) => socket.end(answer))
      const { ended, bothClosed } = yield* throughSplice(upstream.port)
      assert.strictEqual(yield* ended, answer)
      yield* bothClosed
    }).pipe(Effect.scoped, Effect.timeout("10 seconds")))

  it.live("a refused connect to the upstream closes the browser's side, and onClosed runs", () =>
    Effect.gen(function*() {
      const { ended, bothClosed } = yield* throughSplice(yield* closedPort)
      assert.strictEqual(yield* ended, "")
      yield* bothClosed
    }).pipe(Effect.scoped, Effect.timeout("10 seconds")))
})
