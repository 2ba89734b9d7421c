/**
 * One rule for every server here that takes WebSockets (the VS Code token proxy, the loopback
 * header relay): once a connection asks for an upgrade, Node's HTTP server stops watching it for
 * errors, so a client that resets it (a killed browser, or anyone refused) would raise an `error`
 * nobody listens for and end the process, the action server included. The socket is destroyed on
 * error from its first moment, before the handler decides anything.
 */
import type { IncomingMessage, Server } from "node:http"
import type { Socket } from "node:net"

/** Handle `server`'s upgrades, each socket guarded against an unheard error first. */
export const onUpgrade = (
  server: Server,
  handle: (request: IncomingMessage, socket: Socket, head: Buffer) => void
): Server =>
  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy())
    handle(request, socket, head)
  })
