/**
 * Where the owner's HTTP client reaches a pod (and, with another dialer, where a browser reaches
 * a provider's port through headerRelay.ts): a TCP listener on 127.0.0.1 (never beyond the
 * loopback: whoever reaches it reaches the server, key still required) whose every accepted
 * connection is carried to the pod's server port by a dialer, one carrier per connection:
 * - `portForwardDialer`: a client-node `PortForward` WebSocket through the API server, for an
 *   owner outside the cluster. client-node leaves the local socket open when the WebSocket
 *   drops (API server restart, idle timeout, `dropPortForwards()` in tests), so the socket is
 *   destroyed with it: the HTTP client sees a closed connection and its next request opens a
 *   fresh forward.
 * - `podIpDialer`: a TCP connection to the pod IP, for an owner inside the cluster.
 * Either way the URL stays the same while the pod behind it changes (pause deletes it, resume
 * makes a new one with a new IP): the dialer asks for the pod of the moment.
 */
import type * as K8s from "@kubernetes/client-node"
import { Effect } from "effect"
import { connect, createServer, type Socket } from "node:net"
import { RuntimeStartError } from "../schema/errors.ts"

/** Carries one accepted connection to the pod (destroying it when that fails or drops). */
export type Dialer = (socket: Socket) => void

/** A local listener for `dial`, closed (with every connection it accepted) with the scope: its URL. */
export const localEndpoint = Effect.fn("localEndpoint")(function*(dial: Dialer) {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    // A reset from either side ends this connection only.
    socket.on("error", () => socket.destroy())
    dial(socket)
  })
  const port = yield* Effect.acquireRelease(
    Effect.callback<number, RuntimeStartError>((resume) => {
      server.once(
        "error",
        (error) =>
          resume(Effect.fail(new RuntimeStartError({ message: `Cannot listen on 127.0.0.1: ${error.message}` })))
      )
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as { port: number }).port)))
    }),
    () =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )
  return `http://127.0.0.1:${port}`
})

/** Connections through the API server's port-forward to `port` of the pod `pod()` names. */
export const portForwardDialer = (
  forward: K8s.PortForward,
  namespace: string,
  pod: () => string,
  port: number
): Dialer =>
(socket) => {
  forward.portForward(namespace, pod(), [port], socket, null, socket).then((opened) => {
    const ws = typeof opened === "function" ? opened() : opened
    if (ws === null) return socket.destroy()
    ws.on("close", () => socket.destroy())
    ws.on("error", () => socket.destroy())
    // Our side is gone, so nothing is owed to the peer: a close handshake would keep the pod's
    // connection open until the peer answers it (ws waits up to 30 s), and the server would go on
    // running what the closed request started. Dropping the WebSocket ends it at once.
    socket.on("close", () => ws.terminate())
    // A request written after the drop but before its close arrived would go nowhere: end it now.
    socket.on("data", () => ws.readyState === ws.OPEN || socket.destroy())
  }, () => socket.destroy())
}

/** Connections straight to `port` at the pod IP `ip()` gives (undefined: no pod runs now). */
export const podIpDialer = (ip: () => string | undefined, port: number): Dialer => (socket) => {
  const address = ip()
  if (address === undefined) return socket.destroy()
  const upstream = connect(port, address)
  upstream.on("error", () => socket.destroy())
  upstream.on("close", () => socket.destroy())
  socket.on("close", () => upstream.destroy())
  socket.pipe(upstream).pipe(socket)
}
