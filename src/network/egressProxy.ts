/**
 * The egress proxy of a sandbox with an allow list: an HTTP proxy (CONNECT for TLS and anything else
 * over TCP, absolute-form requests for plain HTTP) that lets a connection through only when the
 * allow list does (allows.ts), resolving names itself and connecting to the very address it checked,
 * so that neither a resolver inside the sandbox nor a name that re-resolves elsewhere (rebinding)
 * opens another way out. It runs outside the sandbox (Docker: in the sandbox's gateway container,
 * engines/docker/egress.ts), the only host the sandbox's network reaches.
 *
 * Secrets at the edge (injection.ts, docs/secrets.md) go on plain-HTTP requests to their bound hosts
 * in `forwardRequest`, asked in absolute form or inside a `CONNECT` tunnel. TLS to a bound host is
 * closed: it is not terminated here, so the secret could not be put on it, and a connection closed
 * with the reason logged beats one failing authentication with a placeholder.
 *
 * Plain Node, no Effect: bundled into payload/egress-proxy.mjs.
 */
import { lookup as dnsLookup } from "node:dns/promises"
import * as http from "node:http"
import { connect as netConnect, isIP, type Socket } from "node:net"
import type { Duplex } from "node:stream"
import { compileRules, isPublicAddress } from "./allows.ts"
import { type BoundSecret, inject, normalHost, secretsFor } from "./injection.ts"
import type { EgressRule } from "./policy.ts"

/** Every address a name resolves to (injected by tests, which resolve their own test names). */
export type Lookup = (host: string) => Promise<ReadonlyArray<string>>

const systemLookup: Lookup = (host) =>
  dnsLookup(host, { all: true, verbatim: true }).then((found) => found.map((entry) => entry.address))

/** Where a request goes, or why not. */
export type Verdict =
  | { readonly _tag: "Allow"; readonly address: string }
  | { readonly _tag: "Deny"; readonly why: string }

/**
 * Decide a destination: an address literal by the CIDR rules; a name allowed by a Host or Domain
 * rule goes to its first address on the public internet or in a CIDR rule (never, by its name
 * alone, to the host, a neighbour or the metadata service: allows.ts); any other name only to an
 * address a CIDR rule covers.
 */
export const decide = async (
  rules: ReadonlyArray<EgressRule>,
  rawHost: string,
  lookup: Lookup = systemLookup
): Promise<Verdict> => {
  const allows = compileRules(rules)
  const host = normalHost(rawHost)
  if (isIP(host) !== 0) {
    return allows.address(host) ? { _tag: "Allow", address: host } : { _tag: "Deny", why: "address not allowed" }
  }
  const named = allows.name(host)
  let addresses: ReadonlyArray<string>
  try {
    addresses = await lookup(host)
  } catch {
    return { _tag: "Deny", why: named ? "name does not resolve" : "name not allowed" }
  }
  // IPv4 first: a gateway's network has IPv4 only unless the engine enables IPv6.
  const ordered = [...addresses].sort((a, b) => isIP(a) - isIP(b))
  const address = ordered.find((found) => allows.address(found) || (named && isPublicAddress(found)))
  if (address !== undefined) return { _tag: "Allow", address }
  return { _tag: "Deny", why: named ? "name resolves only to addresses off the public internet" : "name not allowed" }
}

/** `host:port` of a CONNECT (IPv6 in brackets), or undefined when it is not one. */
const authority = (target: string): { readonly host: string; readonly port: number } | undefined => {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target)
  const port = Number(match?.[2])
  return match === null || !(port > 0 && port < 65536) ? undefined : { host: match[1]!, port }
}

export interface EgressProxyOptions {
  readonly rules: ReadonlyArray<EgressRule>
  readonly lookup?: Lookup
  /** Secrets put on plain-HTTP requests to their hosts (none by default). */
  readonly secrets?: ReadonlyArray<BoundSecret>
  /** Told each refusal (the gateway logs it), for whoever wonders why a request failed. */
  readonly onDeny?: (target: string, why: string) => void
}

const refuse = (socket: Duplex, target: string, why: string) =>
  socket.end(
    `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n` +
      `effect-sandbox egress policy: ${target} is not allowed (${why})\n`
  )

/** Pipe two sockets together until either ends; an error on one ends both. */
const splice = (a: Duplex, b: Socket) => {
  a.on("error", () => b.destroy())
  b.on("error", () => a.destroy())
  a.pipe(b).pipe(a)
}

/** A plain-HTTP request to `url` decided, then forwarded (with the secrets bound to its host) or refused. */
type Forward = (request: http.IncomingMessage, response: http.ServerResponse, url: URL) => void

/** The first byte of a TLS record carrying a handshake (a ClientHello opens every TLS connection). */
const TLS_HANDSHAKE = 0x16

/**
 * A `CONNECT` to a host with a bound secret: answered, then read. Plain HTTP in the tunnel (what
 * Node's fetch sends through a proxy even for `http://`) is served as if asked in absolute form, the
 * tunnel's target deciding the destination (its Host header is overwritten), so the secret goes on
 * it; TLS is closed, logged with the reason, since it is not terminated here and would carry only
 * the placeholder.
 */
const serveBoundTunnel = (
  socket: Duplex,
  head: Buffer,
  where: { readonly host: string; readonly port: number },
  forward: Forward,
  denied: (target: string, why: string) => void
) => {
  const target = `${where.host}:${where.port}`
  const tunnel = http.createServer((request, response) => {
    if (!(request.url ?? "").startsWith("/")) {
      response.writeHead(400, { "Content-Type": "text/plain" }).end(
        "effect-sandbox egress proxy: a path expected in a tunnel\n"
      )
      return
    }
    forward(request, response, new URL(`http://${target}${request.url}`))
  })
  const serve = (first: Buffer) => {
    if (first[0] === TLS_HANDSHAKE) {
      denied(target, BOUND_OVER_TLS)
      socket.destroy()
      return
    }
    socket.unshift(first)
    tunnel.emit("connection", socket)
    socket.resume()
  }
  socket.write("HTTP/1.1 200 Connection Established\r\n\r\n")
  if (head.length > 0) serve(head)
  else socket.once("data", (chunk: Buffer) => (socket.pause(), serve(chunk)))
}

/** The proxy's HTTP server, not yet listening. */
export const makeEgressProxy = (options: EgressProxyOptions): http.Server => {
  const lookup = options.lookup ?? systemLookup
  const denied = (target: string, why: string) => options.onDeny?.(target, why)
  const secrets = options.secrets ?? []
  const forward: Forward = (request, response, url) =>
    void decide(options.rules, url.hostname, lookup).then((verdict) => {
      if (verdict._tag === "Deny") {
        denied(url.host, verdict.why)
        response.writeHead(403, { "Content-Type": "text/plain" }).end(
          `effect-sandbox egress policy: ${url.host} is not allowed (${verdict.why})\n`
        )
        return
      }
      forwardRequest(request, response, url, verdict.address, secretsFor(secrets, url.hostname))
    })
  const server = http.createServer((request, response) => {
    let url: URL
    try {
      url = new URL(request.url ?? "")
    } catch {
      response.writeHead(400, { "Content-Type": "text/plain" }).end(
        "effect-sandbox egress proxy: absolute URL expected\n"
      )
      return
    }
    if (url.protocol !== "http:") {
      response.writeHead(400, { "Content-Type": "text/plain" }).end(
        `effect-sandbox egress proxy: ${url.protocol} needs CONNECT\n`
      )
      return
    }
    forward(request, response, url)
  })
  server.on("connect", (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy())
    const target = request.url ?? ""
    const where = authority(target)
    if (where === undefined) return refuse(socket, target, "not host:port")
    void decide(options.rules, where.host, lookup).then((verdict) => {
      if (verdict._tag === "Deny") {
        denied(target, verdict.why)
        return refuse(socket, target, verdict.why)
      }
      if (secretsFor(secrets, where.host).length > 0) return serveBoundTunnel(socket, head, where, forward, denied)
      const upstream = netConnect({ host: verdict.address, port: where.port })
      let connected = false
      upstream.once("connect", () => {
        connected = true
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n")
        if (head.length > 0) upstream.write(head)
        splice(socket, upstream)
      })
      upstream.once("error", (error) => {
        if (!connected) {
          socket.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`)
        }
      })
    })
  })
  return server
}

/** Why TLS to a host with a bound secret is closed. */
const BOUND_OVER_TLS = "TLS to a host with a bound secret: the secret is put only on plain HTTP through the proxy " +
  "(TLS is not terminated here: docs/secrets.md)"

/**
 * A plain-HTTP request sent on to the address the verdict chose, its proxy headers dropped, the
 * secrets bound to its destination put in.
 */
const forwardRequest = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
  url: URL,
  address: string,
  bound: ReadonlyArray<BoundSecret>
) => {
  const { "proxy-authorization": _auth, "proxy-connection": _connection, ...sent } = request.headers
  const { headers, path } = inject(bound, { ...sent, host: url.host }, `${url.pathname}${url.search}`)
  const upstream = http.request({
    host: address,
    port: url.port === "" ? 80 : Number(url.port),
    method: request.method,
    path,
    headers,
    setHost: false
  }, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(response)
  })
  upstream.on("error", (error) => {
    if (!response.headersSent) response.writeHead(502, { "Content-Type": "text/plain" })
    response.end(`${error.message}\n`)
  })
  request.pipe(upstream)
}
