/**
 * VS Code through proxy mode: `/<runtime_id>/vscode/...` goes to that sandbox's IDE port
 * (`VSCODE_PORT`, the token proxy of server/vscode/tokenProxy.ts), WebSocket upgrades included:
 * OpenHands' path-mode `vscode_url` is `<api>/<runtime_id>/vscode?tkn=<token>&folder=<workspace>`.
 *
 * Who may pass: a browser cannot send `X-Session-API-Key`, so this path is not behind the session
 * key (nor the API key, which is never forwarded, nor the session key); VS Code's connection token
 * guards it, checked in the sandbox, which answers 403 to a request or upgrade without it. The API
 * forwards only to a sandbox started with the plugin (`Sandbox.vscodeUrl`): any other runtime id,
 * known or not, is answered here and reaches nothing. The action server's own
 * `/vscode/connection_token` (session key required) stays with the session-keyed proxy (proxy.ts).
 *
 * Why below the Effect app: the workbench's asset paths (upper case, `%`-escapes, `@`) are not
 * the plain targets the API's gate accepts (server/requestTarget.ts), and a WebSocket must be
 * spliced byte for byte (the platform's upgrade handling ends WebSockets in this process). So
 * these requests and upgrades are taken off the Node server before its listeners see them
 * (`divertVsCode`), and forwarded with node:http and node:net. The prefix is removed on the way
 * in, and put back on the way out where the IDE names its own paths: a redirect's absolute
 * `Location`, and its token cookie's `Path` (scoped to this runtime: two sandboxes' IDEs in one
 * browser keep their own cookies).
 */
import { Context, Effect, Fiber } from "effect"
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
  type Server,
  type ServerResponse,
  STATUS_CODES
} from "node:http"
import { connect, type Socket } from "node:net"
import { requestHead } from "../server/rawHead.ts"
import { splice } from "../server/splice.ts"
import { Activity } from "./activity.ts"
import { Sandboxes } from "./sandboxes.ts"
import { RUNTIME_ID_PATTERN } from "./schemas.ts"

/** `/<runtime_id>/vscode`, then the end, `/` or `?`. */
const VSCODE_PREFIX = new RegExp(`^/(${RUNTIME_ID_PATTERN.source.slice(1, -1)})/vscode(?=[/?]|$)`)

/** The action server's endpoint under the same prefix (OpenHands' client reads the token there). */
const TOKEN_ENDPOINT = /^\/connection_token(?=\?|$)/

/** A request for a sandbox's IDE: the runtime, the prefix as sent, the target in the sandbox. */
export interface VsCodeTarget {
  readonly runtimeId: string
  readonly prefix: string
  readonly rest: string
}

/** The IDE target of a request URL, or undefined for anything else. */
export const vscodeTarget = (url: string): VsCodeTarget | undefined => {
  const match = VSCODE_PREFIX.exec(url)
  if (match === null) return undefined
  const rest = url.slice(match[0].length)
  if (TOKEN_ENDPOINT.test(rest)) return undefined
  return { runtimeId: match[1]!, prefix: match[0], rest: rest.startsWith("/") ? rest : `/${rest}` }
}

/** Headers of one connection, and the API's and action server's keys: none reaches the IDE. */
const NOT_FORWARDED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "x-api-key",
  "x-session-api-key"
])

/** What an upgrade keeps of those: the handshake needs `Connection: Upgrade`. */
const NOT_FORWARDED_ON_UPGRADE = new Set(["x-api-key", "x-session-api-key"])

const requestHeaders = (headers: IncomingHttpHeaders): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_FORWARDED.has(name)))

/** `Location: /x` is the IDE's own path: under the prefix for the browser. */
const rebasedLocation = (location: string, prefix: string) =>
  location.startsWith("/") && !location.startsWith("//") ? `${prefix}${location}` : location

/** A cookie's `Path=/x` becomes `Path=<prefix>/x` (`Path=/`: the prefix itself). */
const rebasedCookie = (cookie: string, prefix: string) =>
  cookie.replace(/;\s*path=(\/[^;]*)/i, (_all, path: string) => `; Path=${path === "/" ? prefix : `${prefix}${path}`}`)

const responseHeaders = (headers: IncomingHttpHeaders, prefix: string): OutgoingHttpHeaders => {
  const kept: OutgoingHttpHeaders = requestHeaders(headers)
  if (typeof headers.location === "string") kept["location"] = rebasedLocation(headers.location, prefix)
  if (headers["set-cookie"] !== undefined) {
    kept["set-cookie"] = headers["set-cookie"].map((c) => rebasedCookie(c, prefix))
  }
  return kept
}

/** Where the request goes: the sandbox's IDE port, or why not (status and detail). */
type Route =
  | { readonly _tag: "Forward"; readonly host: string; readonly port: number }
  | { readonly _tag: "Refuse"; readonly status: number; readonly detail: string }

const refuse = (status: number, detail: string): Route => ({ _tag: "Refuse", status, detail })

/** The route of a request for `runtimeId`'s IDE, read from its sandbox now (touching it: activity). */
const routeOf = Effect.fn("runtimeApi.vscode.route")(function*(runtimeId: string) {
  const sandbox = yield* (yield* Sandboxes).byRuntime(runtimeId)
  if (sandbox === undefined) return refuse(404, `Runtime ${runtimeId} not found`)
  if (sandbox.status === "paused") return refuse(503, `Runtime ${runtimeId} is paused`)
  if (sandbox.status === "stopped") return refuse(502, `Runtime ${runtimeId} is stopped`)
  if (sandbox.vscodeUrl === undefined) {
    return refuse(404, `Runtime ${runtimeId} has no VS Code (it was not started with the vscode plugin)`)
  }
  ;(yield* Activity).touch(runtimeId)
  const url = new URL(sandbox.vscodeUrl)
  return { _tag: "Forward", host: url.hostname, port: Number(url.port) } satisfies Route
}, Effect.catch((error) => Effect.succeed(refuse(error.status, error.detail))))

const detailBody = (detail: string) => JSON.stringify({ detail })

/** Forward one HTTP request and stream the answer back; done when the response closes. */
const forwardRequest = (request: IncomingMessage, response: ServerResponse, target: VsCodeTarget, route: Route) =>
  Effect.callback<void>((resume) => {
    // The browser may have gone while the sandbox was looked up.
    if (response.destroyed) return resume(Effect.void)
    if (route._tag === "Refuse") {
      response.writeHead(route.status, { "content-type": "application/json" }).end(detailBody(route.detail))
      return resume(Effect.void)
    }
    const upstream = httpRequest({
      host: route.host,
      port: route.port,
      method: request.method,
      path: target.rest,
      headers: requestHeaders(request.headers)
    })
    upstream.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.headers, target.prefix))
      // An answer cut short is cut short for the browser too, not left hanging.
      answer.on("error", () => response.destroy()).pipe(response)
    })
    upstream.on("error", (error) => {
      if (response.headersSent) return void response.destroy()
      response.writeHead(502, { "content-type": "application/json" }).end(
        detailBody(`VS Code of runtime ${target.runtimeId} is not reachable: ${error.message}`)
      )
    })
    response.on("close", () => {
      upstream.destroy()
      resume(Effect.void)
    })
    request.pipe(upstream)
    return Effect.sync(() => {
      upstream.destroy()
      response.destroy()
    })
  })

/**
 * Splice an upgrade to the IDE port: the handshake as received (target without the prefix, the
 * keys left out), then bytes both ways until either side closes. The IDE's own answer (101, or
 * 403 without the token) goes back as it is. Data from the browser counts as activity.
 */
const forwardUpgrade = (
  request: IncomingMessage,
  client: Socket,
  head: Buffer,
  target: VsCodeTarget,
  route: Route,
  touch: () => void
) =>
  Effect.callback<void>((resume) => {
    if (client.destroyed) return resume(Effect.void)
    if (route._tag === "Refuse") {
      const body = detailBody(route.detail)
      client.end(
        `HTTP/1.1 ${route.status} ${STATUS_CODES[route.status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      )
      return resume(Effect.void)
    }
    const upstream = connect(route.port, route.host)
    upstream.write(requestHead(request, target.rest, NOT_FORWARDED_ON_UPGRADE))
    if (head.length > 0) upstream.write(head)
    client.on("data", touch)
    splice(client, upstream, () => resume(Effect.void))
    return Effect.sync(() => {
      client.destroy()
      upstream.destroy()
    })
  })

/**
 * Take the IDE's requests and upgrades off `server` (made by the caller, not yet listening) before
 * its other listeners, the Effect app's, see them; each is handled in a fiber of the current scope
 * (its release ends open WebSockets, which the HTTP server's close does not).
 */
export const divertVsCode = Effect.fn("runtimeApi.divertVsCode")(function*(server: Server) {
  const services = yield* Effect.context<Sandboxes | Activity>()
  const scope = yield* Effect.scope
  const activity = Context.get(services, Activity)
  const fork = (effect: Effect.Effect<void, never, Sandboxes | Activity>) =>
    void Fiber.runIn(Effect.runForkWith(services)(effect), scope)
  const emit = server.emit.bind(server)
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    const request = args[0] as IncomingMessage | undefined
    const target = event === "request" || event === "checkContinue" || event === "upgrade"
      ? vscodeTarget(request?.url ?? "")
      : undefined
    if (target === undefined) return emit(event, ...args)
    if (event === "upgrade") {
      const [, socket, head] = args as [IncomingMessage, Socket, Buffer]
      socket.on("error", () => undefined)
      fork(Effect.flatMap(
        routeOf(target.runtimeId),
        (route) => forwardUpgrade(request!, socket, head, target, route, () => activity.touch(target.runtimeId))
      ))
      return true
    }
    const response = args[1] as ServerResponse
    if (event === "checkContinue") response.writeContinue()
    fork(Effect.flatMap(routeOf(target.runtimeId), (route) => forwardRequest(request!, response, target, route)))
    return true
  }) as Server["emit"]
  return server
})
