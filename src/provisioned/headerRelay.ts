/**
 * A relay on 127.0.0.1 to a provider's proxy that wants a header a browser cannot send (Runloop's
 * authenticated tunnel: `X-Runloop-Tunnel-Authorization`). A browser on this machine opens the
 * relay's URL; every request and WebSocket it makes is sent on to `target` with the header added,
 * so the port stays behind the provider's authentication and is opened only here, on the loopback
 * (as DockerRuntime publishes its ports), for as long as the scope lives.
 *
 * The relay speaks for the page it serves: a request whose `Origin` is another site is refused
 * (403), and a same-origin one is sent on with the target's origin, so a server behind it that
 * compares `Origin` with `Host` (code-server does, for WebSockets) sees one origin whatever the
 * provider's proxy does to forwarding headers.
 */
import { Effect, Redacted } from "effect"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import type { Socket } from "node:net"
import { responseHead } from "../server/rawHead.ts"
import { splice } from "../server/splice.ts"
import { onUpgrade } from "../server/upgrade.ts"
import { localEndpoint } from "./localEndpoint.ts"

/** Whether `request` comes from a page of the relay itself (or from no page: a non-browser client). */
const sameOrigin = (request: IncomingMessage): boolean => {
  const origin = request.headers.origin
  if (origin === undefined) return true
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

/**
 * A relay to `target` (an http or https URL; its path is prefixed to every request's) adding
 * `headers`, listening on 127.0.0.1 until the scope closes (every connection ended then): its URL,
 * without a trailing slash.
 */
export const headerRelay = Effect.fn("headerRelay")(function*(
  target: string,
  headers: Readonly<Record<string, Redacted.Redacted<string>>>
) {
  const upstream = new URL(target)
  const send = upstream.protocol === "https:" ? httpsRequest : httpRequest
  const prefix = upstream.pathname.replace(/\/$/, "")
  const added = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Redacted.value(value)]))
  /** `request` as sent on: to the target's host and path, from the target's origin, with the headers. */
  const forward = (request: IncomingMessage) => {
    const sent: IncomingHttpHeaders = { ...request.headers, host: upstream.host, ...added }
    if (sent.origin !== undefined) sent.origin = upstream.origin
    return send({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: `${prefix}${request.url ?? "/"}`,
      headers: sent
    })
  }
  const server = createServer((request, response) => {
    if (!sameOrigin(request)) return response.writeHead(403, { "content-type": "text/plain" }).end("Forbidden.")
    const out = forward(request)
    out.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    out.on("error", (error) => {
      if (response.headersSent) return response.destroy()
      response.writeHead(502, { "content-type": "text/plain" }).end(
        `The relay cannot reach ${upstream.host}: ${error.message}`
      )
    })
    // A browser that goes away ends the request it made upstream.
    response.on("close", () => response.writableFinished || out.destroy())
    request.pipe(out)
  })
  onUpgrade(server, (request, socket, head) => {
    if (!sameOrigin(request)) return socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n")
    const out = forward(request)
    out.on("upgrade", (answer, upstreamSocket: Socket, upstreamHead: Buffer) => {
      socket.write(responseHead(answer))
      if (upstreamHead.length > 0) socket.write(upstreamHead)
      if (head.length > 0) upstreamSocket.write(head)
      // The browser's side ends (or the scope closes it): the provider's side ends too.
      splice(socket, upstreamSocket)
    })
    // The upstream refused the upgrade: its status goes back, and the connection ends.
    out.on("response", (answer) => {
      answer.resume()
      socket.end(`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\nConnection: close\r\n\r\n`)
    })
    out.on("error", () => socket.destroy())
    out.end()
  })
  // The loopback listener (closed with the scope, every connection with it) hands each connection to the server.
  return yield* localEndpoint((socket) => server.emit("connection", socket))
})
