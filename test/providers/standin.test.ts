/**
 * The stand-ins' shared WebSocket plumbing: an upgrade a stand-in refuses, whose client dies
 * (resets the connection) while the refusal is on its way, must not take the test process down.
 * Daytona's SDK does exactly this: every client retries a Socket.IO connection the stand-in
 * refuses, and the hosted lifecycle suite SIGKILLs a client. Vitest fails the run on the
 * `error` nobody listens for.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import { type AddressInfo, connect } from "node:net"
import type { Duplex } from "node:stream"
import { ApiError, refuseUpgrade, upgradedSockets } from "./standin.ts"

describe("stand-in upgrades", () => {
  it.live("a client that resets its refused upgrade leaves no error behind, and the socket closed", () =>
    Effect.gen(function*() {
      const server = createServer()
      const upgraded = upgradedSockets(server)
      // As a stand-in answers after looking its target up, the refusal comes later (here: once the client is gone).
      let pending!: (socket: Duplex) => void
      const arrived = new Promise<Duplex>((resolve) => (pending = resolve))
      server.on("upgrade", (_request: IncomingMessage, socket: Duplex) => pending(socket))
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const { port } = server.address() as AddressInfo
      const client = connect(port, "127.0.0.1")
      client.on("error", () => undefined)
      client.write(
        "GET /api/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n" +
          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
      )
      const socket = yield* Effect.promise(() => arrived)
      assert.strictEqual(upgraded.size, 1)
      // A SIGKILLed client: its kernel answers with a reset.
      client.resetAndDestroy()
      yield* Effect.sync(() => upgraded.size).pipe(
        Effect.repeat({ until: (open) => open === 0, schedule: Schedule.spaced("10 millis") }),
        Effect.timeout("5 seconds")
      )
      assert.isTrue(socket.destroyed)
      // The refusal, written to the socket the reset closed, throws nothing either.
      refuseUpgrade(socket, new ApiError(404, "Cannot upgrade /api/socket.io/"))
    }).pipe(Effect.scoped))
})
