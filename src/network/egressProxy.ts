/**
 * The egress proxy of a sandbox with an allow list: an HTTP proxy (CONNECT for TLS and anything else
 * over TCP, absolute-form requests for plain HTTP) that lets a connection through only when the
 * allow list does (allows.ts), resolving names itself and connecting to the very address it checked,
 * so that neither a resolver inside the sandbox nor a name that re-resolves elsewhere (rebinding)
 * opens another way out. It runs outside the sandbox (Docker: in the sandbox's gateway container,
 * engines/docker/egress.ts), the only host the sandbox's network reaches.
 *
 * Plain Node, no Effect: bundled into payload/egress-proxy.mjs. Where secrets at the edge will go:
 * `forwardRequest` sees every plain-HTTP request's headers (a header can be added there per
 * destination); HTTPS needs the CONNECT tunnel terminated with a per-sandbox CA (docs/network.md).
 */
import { lookup as dnsLookup } from "node:dns/promises"
import * as http from "node:http"
import { connect as netConnect, isIP, type Socket } from "node:net"
import type { Duplex } from "node:stream"
import { compileRules, isPublicAddress } from "./allows.ts"
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
  const host = rawHost.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase()
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

/** The proxy's HTTP server, not yet listening. */
export const makeEgressProxy = (options: EgressProxyOptions): http.Server => {
  const lookup = options.lookup ?? systemLookup
  const denied = (target: string, why: string) => options.onDeny?.(target, why)
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
    void decide(options.rules, url.hostname, lookup).then((verdict) => {
      if (verdict._tag === "Deny") {
        denied(url.host, verdict.why)
        response.writeHead(403, { "Content-Type": "text/plain" }).end(
          `effect-sandbox egress policy: ${url.host} is not allowed (${verdict.why})\n`
        )
        return
      }
      forwardRequest(request, response, url, verdict.address)
    })
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

/** A plain-HTTP request sent on to the address the verdict chose, its proxy headers dropped. */
const forwardRequest = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
  url: URL,
  address: string
) => {
  const headers = { ...request.headers }
  delete headers["proxy-authorization"]
  delete headers["proxy-connection"]
  const upstream = http.request({
    host: address,
    port: url.port === "" ? 80 : Number(url.port),
    method: request.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host },
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
