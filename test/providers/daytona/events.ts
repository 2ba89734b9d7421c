/**
 * Daytona's notification gateway (`/api/socket.io`: Socket.IO over a WebSocket), as far as the SDK
 * uses it: the SDK subscribes to each sandbox it waits on and ends a wait for a state at the
 * `sandbox.state.updated` event that brings it, polling only once a second besides (its
 * Sandbox.waitForState). Without the gateway each create, start, stop and delete waited up to a
 * second past the state change, which Daytona's own gateway tells at once. Engine.IO 4 / Socket.IO 5
 * framing, the packets the SDK's client sends and reads: the open packet, a connect carrying the
 * API key as its token (checked), pings, and events to every connected client (the SDK picks its
 * sandbox's by id).
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import type { Duplex } from "node:stream"
import { type WebSocket, WebSocketServer } from "ws"

/** What Engine.IO's open packet promises: a ping every 25 s, an answer within 20 s. */
const PING_INTERVAL_MS = 25_000

export interface EventGateway {
  /** Take a WebSocket upgrade to `/api/socket.io/`. */
  readonly upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  /** Send a Socket.IO event to every connected client. */
  readonly emit: (event: string, data: unknown) => void
  readonly close: () => void
}

export const eventGateway = (apiKey: string): EventGateway => {
  const server = new WebSocketServer({ noServer: true })
  const connected = new Set<WebSocket>()
  server.on("connection", (socket: WebSocket) => {
    const open = {
      sid: randomBytes(8).toString("hex"),
      upgrades: [],
      pingInterval: PING_INTERVAL_MS,
      pingTimeout: 20_000
    }
    socket.send(`0${JSON.stringify({ ...open, maxPayload: 1_000_000 })}`)
    const ping = setInterval(() => socket.send("2"), PING_INTERVAL_MS).unref()
    socket.on("message", (data: Buffer) => {
      const packet = data.toString("utf8")
      // A connect to the main namespace, with the client's `auth` (the SDK's: its API key as `token`).
      if (!packet.startsWith("40")) return
      const auth = packet.length > 2 ? (JSON.parse(packet.slice(2)) as { token?: string }) : {}
      if (auth.token !== apiKey) return void socket.send(`44${JSON.stringify({ message: "Unauthorized" })}`)
      connected.add(socket)
      socket.send(`40${JSON.stringify({ sid: randomBytes(8).toString("hex") })}`)
    })
    socket.on("close", () => {
      clearInterval(ping)
      connected.delete(socket)
    })
  })
  return {
    upgrade: (request, socket, head) =>
      server.handleUpgrade(request, socket, head, (upgraded) => server.emit("connection", upgraded, request)),
    emit: (event, data) => {
      for (const socket of connected) socket.send(`42${JSON.stringify([event, data])}`)
    },
    close: () => {
      for (const socket of server.clients) socket.terminate()
      server.close()
    }
  }
}
