/**
 * The pod `portforward` subresource over WebSocket, as the kubelet serves it
 * with the `v4.channel.k8s.io` subprotocol (what client-node's `PortForward`
 * negotiates): per requested port a data channel 2i and an error channel 2i+1,
 * each opened by a frame `[channel, port as uint16 little-endian]`; then binary
 * frames `[channel, bytes...]` both ways. The TCP side is the pod's bridge IP.
 */
import type { IncomingMessage } from "node:http"
import { connect } from "node:net"
import type { Duplex } from "node:stream"
import { WebSocket, WebSocketServer } from "ws"
import { Pods } from "./resources.ts"
import { ApiError, badRequest } from "./status.ts"
import type { Store } from "./store.ts"

/** Subprotocols the kubelet's port-forward accepts, preferred first. */
const PROTOCOLS = ["v4.channel.k8s.io", "portforward.k8s.io"]

const frame = (channel: number, data: Buffer | string) => Buffer.concat([Buffer.from([channel]), Buffer.from(data)])

/** The pod IP and ports of a port-forward request, or the API error it is refused with. */
export const forwardTarget = (store: Store, namespace: string, name: string, query: URLSearchParams) => {
  const pod = store.get(Pods, namespace, name)
  const ports = query.getAll("ports").flatMap((value) => value.split(",")).map(Number)
  if (ports.length === 0 || ports.some((port) => !Number.isInteger(port) || port < 1 || port > 65535)) {
    throw badRequest("invalid port specification: ports must be integers in 1-65535")
  }
  if (pod.status?.phase !== "Running" || pod.status.podIP === undefined) {
    throw badRequest(`unable to upgrade connection: pod ${name} is not running (phase ${pod.status?.phase})`)
  }
  return { ip: pod.status.podIP as string, ports }
}

/** One stand-in's port-forward sessions: `forward` upgrades, `close` ends every open session. */
export const portForwarder = () => {
  const server = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => PROTOCOLS.find((protocol) => offered.has(protocol)) ?? false
  })
  const forward = (request: IncomingMessage, socket: Duplex, head: Buffer, ip: string, ports: Array<number>) =>
    server.handleUpgrade(request, socket, head, (ws) => {
      const connections = ports.map((port, index) => {
        const data = index * 2
        const header = Buffer.alloc(2)
        header.writeUInt16LE(port)
        ws.send(frame(data, header))
        ws.send(frame(data + 1, header))
        const tcp = connect(port, ip)
        tcp.on("data", (chunk) => ws.readyState === WebSocket.OPEN && ws.send(frame(data, chunk)))
        tcp.on("error", (error) => {
          if (ws.readyState === WebSocket.OPEN) {
            ws.send(frame(data + 1, `error forwarding port ${port} to pod ${ip}: ${error.message}`))
          }
          ws.close()
        })
        tcp.on("close", () => ws.close())
        return { data, tcp }
      })
      ws.on("message", (message: Buffer) => {
        const target = connections.find((connection) => connection.data === message[0])
        if (target !== undefined && message.length > 1) target.tcp.write(message.subarray(1))
      })
      ws.on("close", () => connections.forEach(({ tcp }) => tcp.destroy()))
    })
  /** Cut every open session, as a dropped API server connection would; how many there were. */
  const drop = () => {
    const open = server.clients.size
    for (const ws of server.clients) ws.terminate()
    return open
  }
  const close = () => {
    drop()
    server.close()
  }
  return { forward, drop, close }
}

/**
 * Answer an upgrade request that is refused with its Status, as plain HTTP. The HTTP server no
 * longer listens for the socket's errors: a client that resets it must not crash the test process.
 */
export const refuseUpgrade = (socket: Duplex, error: ApiError) => {
  const body = JSON.stringify(error.body)
  socket.on("error", () => socket.destroy())
  socket.end(
    `HTTP/1.1 ${error.code} ${error.reason}\r\ncontent-type: application/json\r\ncontent-length: ${
      Buffer.byteLength(body)
    }\r\nconnection: close\r\n\r\n${body}`
  )
}
