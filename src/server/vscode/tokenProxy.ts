/**
 * The connection-token gate in front of code-server. OpenVSCode Server (which OpenHands runs)
 * checks a connection token itself: `?tkn=<token>` sets a `vscode-tkn` cookie and redirects to the
 * URL without it, later requests and WebSockets carry the cookie, anything else is 403. code-server
 * has no such mode (only a password login page), so it listens on a unix socket only this server
 * can reach (`--auth none` there), and this proxy on `VSCODE_PORT` does OpenVSCode's check.
 * Tokens are compared in constant time, over their SHA-256.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, request as httpRequest, type Server } from "node:http"
import { connect, type Socket } from "node:net"
import { requestHead } from "../rawHead.ts"
import { splice } from "../splice.ts"

export const TOKEN_COOKIE = "vscode-tkn"

const digest = (value: string) => createHash("sha256").update(value).digest()

/** The value of the cookie `name` in a `Cookie` header. */
const cookie = (header: string | undefined, name: string): string | undefined =>
  header?.split(";").map((part) => part.trim()).find((part) => part.startsWith(`${name}=`))?.slice(name.length + 1)

/**
 * What to do with a request: `redirect` (a valid `tkn` in the query: set the cookie, drop the
 * parameter), `pass` (a valid cookie), or `refuse`.
 */
export const tokenCheck = (token: string) => {
  const expected = digest(token)
  const valid = (given: string | undefined | null) =>
    typeof given === "string" && timingSafeEqual(digest(given), expected)
  return (request: IncomingMessage): { readonly _tag: "redirect"; readonly location: string } | {
    readonly _tag: "pass" | "refuse"
  } => {
    const url = new URL(request.url ?? "/", "http://vscode")
    if (valid(url.searchParams.get("tkn"))) {
      url.searchParams.delete("tkn")
      return { _tag: "redirect", location: `${url.pathname}${url.search}` }
    }
    return valid(cookie(request.headers.cookie, TOKEN_COOKIE)) ? { _tag: "pass" } : { _tag: "refuse" }
  }
}

/**
 * An HTTP server (not yet listening) that forwards requests and WebSockets carrying the token to
 * the HTTP server on `socketPath`. Its `close` also ends every connection, upgraded ones included.
 */
export const makeTokenProxy = (token: string, socketPath: string): Server => {
  const check = tokenCheck(token)
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const verdict = check(request)
    if (verdict._tag === "refuse") return response.writeHead(403, { "content-type": "text/plain" }).end("Forbidden.")
    if (verdict._tag === "redirect") {
      return response.writeHead(302, {
        location: verdict.location,
        "set-cookie": `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`
      }).end()
    }
    const upstream = httpRequest({ socketPath, method: request.method, path: request.url, headers: request.headers })
    upstream.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    upstream.on("error", () => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" })
      response.end("VS Code is not answering.")
    })
    request.pipe(upstream)
  })
  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (check(request)._tag !== "pass") {
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
