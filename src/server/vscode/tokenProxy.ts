/**
 * The connection-token gate in front of code-server. OpenVSCode Server (which OpenHands runs)
 * checks a connection token itself: `?tkn=<token>` sets a `vscode-tkn` cookie and redirects to the
 * URL without it, later requests and WebSockets carry the cookie, anything else is 403. code-server
 * has no such mode (only a password login page), so it listens on a unix socket only this server
 * can reach (`--auth none` there), and this proxy on `VSCODE_PORT` does OpenVSCode's check, with
 * what a browser needs to keep IDEs apart (ideOrigin.ts): a token opened on a host every local
 * server shares (reached directly, not through a front end) is first sent to the IDE's own
 * `ide-<h>.localhost` host, the cookie's name is the
 * token's own, a request from another origin's page is refused, and no answer may widen a service
 * worker's scope. Tokens are compared in constant time, over their SHA-256.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
  type Server
} from "node:http"
import { connect, type Socket } from "node:net"
import { requestHead } from "../rawHead.ts"
import { splice } from "../splice.ts"
import { onUpgrade } from "../upgrade.ts"
import {
  fromAnotherOrigin,
  ideBase,
  isSharedLoopbackHost,
  SERVICE_WORKER_HEADERS,
  tokenCookieName
} from "./ideOrigin.ts"

const digest = (value: string) => createHash("sha256").update(value).digest()

/** The value of the cookie `name` in a `Cookie` header. */
const cookie = (header: string | undefined, name: string): string | undefined =>
  header?.split(";").map((part) => part.trim()).find((part) => part.startsWith(`${name}=`))?.slice(name.length + 1)

/** What to do with a request (`tokenCheck`). */
type Verdict =
  /** A valid `tkn` on the IDE's own host: set the cookie, redirect to the URL without it. */
  | { readonly _tag: "redirect"; readonly location: string }
  /** A valid `tkn` on a shared loopback host: redirect, token kept, to the IDE's own host. */
  | { readonly _tag: "relocate"; readonly location: string }
  | { readonly _tag: "pass" }
  | { readonly _tag: "refuse" }

/** The host a request was sent to, as a URL sees it (`127.0.0.1`, `[::1]`), or undefined. */
const requestedHost = (headers: IncomingHttpHeaders): URL | undefined => {
  try {
    return headers.host === undefined ? undefined : new URL(`http://${headers.host}`)
  } catch {
    return undefined
  }
}

/**
 * Whether a front end (a provider's proxy, an ingress) says it forwarded the request: its `Host`
 * is then the front end's choice, not the browser's, and the browser's host is not this proxy's
 * to move (an `ide-<h>.localhost` on the browser's machine would not reach it).
 */
const behindFrontEnd = (headers: IncomingHttpHeaders) =>
  headers["x-forwarded-host"] !== undefined || headers["forwarded"] !== undefined

/** The verdict on each request for the IDE behind `token` (`upgrade`: a WebSocket handshake). */
export const tokenCheck = (token: string) => {
  const expected = digest(token)
  const name = tokenCookieName(token)
  const valid = (given: string | undefined | null) =>
    typeof given === "string" && timingSafeEqual(digest(given), expected)
  return (request: IncomingMessage, upgrade = false): Verdict => {
    if (fromAnotherOrigin(request.headers)) return { _tag: "refuse" }
    const url = new URL(request.url ?? "/", "http://vscode")
    if (!upgrade && valid(url.searchParams.get("tkn"))) {
      const host = requestedHost(request.headers)
      if (host !== undefined && isSharedLoopbackHost(host.hostname) && !behindFrontEnd(request.headers)) {
        // Scheme-relative: the browser keeps the scheme it came with (a TLS tunnel ends before this proxy).
        const own = new URL(ideBase(host.origin, token))
        return { _tag: "relocate", location: `//${own.host}${url.pathname}${url.search}` }
      }
      url.searchParams.delete("tkn")
      return { _tag: "redirect", location: `${url.pathname}${url.search}` }
    }
    return valid(cookie(request.headers.cookie, name)) ? { _tag: "pass" } : { _tag: "refuse" }
  }
}

/** An answer's headers without those that could widen a service worker's scope. */
const withoutServiceWorkerScope = (headers: IncomingHttpHeaders): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([header]) => !SERVICE_WORKER_HEADERS.has(header)))

/**
 * An HTTP server (not yet listening) that forwards requests and WebSockets carrying the token to
 * the HTTP server on `socketPath`. Its `close` also ends every connection, upgraded ones included.
 */
export const makeTokenProxy = (token: string, socketPath: string): Server => {
  const check = tokenCheck(token)
  const name = tokenCookieName(token)
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const verdict = check(request)
    if (verdict._tag === "refuse") return response.writeHead(403, { "content-type": "text/plain" }).end("Forbidden.")
    if (verdict._tag === "relocate") return response.writeHead(302, { location: verdict.location }).end()
    if (verdict._tag === "redirect") {
      // Lax, as OpenVSCode's: a Strict cookie is not sent on the redirect's own follow-up when the
      // IDE was opened from a link on another site (OpenHands' page), which would then be 403.
      return response.writeHead(302, {
        location: verdict.location,
        "set-cookie": `${name}=${token}; Path=/; HttpOnly; SameSite=Lax`
      }).end()
    }
    const upstream = httpRequest({ socketPath, method: request.method, path: request.url, headers: request.headers })
    upstream.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, withoutServiceWorkerScope(answer.headers))
      answer.pipe(response)
    })
    upstream.on("error", () => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" })
      response.end("VS Code is not answering.")
    })
    request.pipe(upstream)
  })
  onUpgrade(server, (request, socket, head) => {
    if (check(request, true)._tag !== "pass") {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n")
      return
    }
    const upstream = connect(socketPath)
    sockets.add(socket).add(upstream)
    upstream.write(requestHead(request))
    if (head.length > 0) upstream.write(head)
    splice(socket, upstream, () => {
      sockets.delete(socket)
      sockets.delete(upstream)
    })
  })
  const close = server.close.bind(server)
  server.close = (callback) => {
    close(callback)
    server.closeAllConnections()
    for (const socket of sockets) socket.destroy()
    return server
  }
  return server
}
