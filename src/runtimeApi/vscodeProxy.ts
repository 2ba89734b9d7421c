/**
 * VS Code through proxy mode. Each sandbox's IDE is served on a host of its own,
 * `<runtime_id>-<mac>.<domain>` on this server's port (vscodeHosts.ts), never on the API's origin:
 * every request and WebSocket upgrade whose `Host` names such a host goes to that sandbox's IDE
 * port (`VSCODE_PORT`, the token proxy of server/vscode/tokenProxy.ts) as it is. OpenHands'
 * path-mode `vscode_url`, `<api>/<runtime_id>/vscode?tkn=<token>&folder=<workspace>`, is only an
 * entry: with the IDE's valid token (asked of the sandbox's action server with its session key) it
 * is answered with a redirect to the same target on the IDE's host, else refused; nothing of the
 * IDE is served, and no cookie set, on the API's origin.
 *
 * Who may pass: a browser cannot send `X-Session-API-Key`, so an IDE host is not behind the
 * session key (nor the API key; neither is forwarded): VS Code's connection token guards it,
 * checked in the sandbox, which answers 403 to a request or upgrade without it. Before that, a
 * request from a page of another origin (`Origin`, `Sec-Fetch-Site`: ideOrigin.ts) is refused
 * here, and answers lose `Service-Worker-Allowed`. The API forwards only to a sandbox started with
 * the plugin (`Sandbox.vscodeUrl`) whose host's mac matches: any other runtime id, known or not,
 * is answered here and reaches nothing. The action server's own `/vscode/connection_token`
 * (session key required) stays with the session-keyed proxy (proxy.ts).
 *
 * Why below the Effect app: the workbench's asset paths (upper case, `%`-escapes, `@`) are not
 * the plain targets the API's gate accepts (server/requestTarget.ts), and a WebSocket must be
 * spliced byte for byte (the platform's upgrade handling ends WebSockets in this process). So
 * these requests and upgrades are taken off the Node server before its listeners see them
 * (`divertVsCode`), and forwarded with node:http and node:net.
 */
import { Context, Effect, Fiber, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
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
import { fromAnotherOrigin, SERVICE_WORKER_HEADERS } from "../server/vscode/ideOrigin.ts"
import { SESSION_KEY_HEADER } from "../telemetry/secretHeaders.ts"
import { Activity } from "./activity.ts"
import { type Sandbox, Sandboxes } from "./sandboxes.ts"
import { RUNTIME_ID_PATTERN } from "./schemas.ts"
import { hostMatches, type IdeHost, ideHostLabel, ideHostOf } from "./vscodeHosts.ts"

/** Where IDE hosts are: their domain (undefined: none, VS Code is off), and a host label's origin. */
export interface IdeHosting {
  readonly domain: string | undefined
  /** `<scheme>://<label>.<domain>[:port]`: the API's public scheme and port. */
  readonly origin: (label: string) => string
}

/** `/<runtime_id>/vscode`, then the end, `/` or `?`. */
const VSCODE_PREFIX = new RegExp(`^/(${RUNTIME_ID_PATTERN.source.slice(1, -1)})/vscode(?=[/?]|$)`)

/** The action server's endpoint under the same prefix (OpenHands' client reads the token there). */
const TOKEN_ENDPOINT = /^\/connection_token(?=\?|$)/

/** A request for the path-mode entry to a sandbox's IDE: the runtime, and the target on the IDE's host. */
export interface VsCodeTarget {
  readonly runtimeId: string
  readonly rest: string
}

/** The IDE entry of a request URL on the API's host, or undefined for anything else. */
export const vscodeTarget = (url: string): VsCodeTarget | undefined => {
  const match = VSCODE_PREFIX.exec(url)
  if (match === null) return undefined
  const rest = url.slice(match[0].length)
  if (TOKEN_ENDPOINT.test(rest)) return undefined
  return { runtimeId: match[1]!, rest: rest.startsWith("/") ? rest : `/${rest}` }
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

/** Beside a connection's own headers, what no answer from an IDE keeps. */
const NOT_ANSWERED = new Set([...NOT_FORWARDED, ...SERVICE_WORKER_HEADERS])

const kept = (headers: IncomingHttpHeaders, dropped: ReadonlySet<string>): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name)))

/** What to do with a request: forward it to the sandbox's IDE port, redirect it, or refuse it. */
type Route =
  | { readonly _tag: "Forward"; readonly host: string; readonly port: number }
  | { readonly _tag: "Redirect"; readonly location: string }
  | { readonly _tag: "Refuse"; readonly status: number; readonly detail: string }

const refuse = (status: number, detail: string): Route => ({ _tag: "Refuse", status, detail })

/**
 * `runtimeId`'s sandbox if it serves an IDE now (touching it: activity), else why not. With
 * `host`, only if that IDE host is the sandbox's (else answered as unknown).
 */
const servingSandbox = Effect.fn("runtimeApi.vscode.sandbox")(function*(runtimeId: string, host?: IdeHost) {
  const sandbox = yield* (yield* Sandboxes).byRuntime(runtimeId)
  if (sandbox === undefined || (host !== undefined && !hostMatches(host, sandbox.sessionApiKey))) {
    return refuse(404, `Runtime ${runtimeId} not found`)
  }
  if (sandbox.status === "paused") return refuse(503, `Runtime ${runtimeId} is paused`)
  if (sandbox.status === "stopped") return refuse(502, `Runtime ${runtimeId} is stopped`)
  if (sandbox.vscodeUrl === undefined) {
    return refuse(404, `Runtime ${runtimeId} has no VS Code (it was not started with the vscode plugin)`)
  }
  ;(yield* Activity).touch(runtimeId)
  return sandbox
}, Effect.catch((error) => Effect.succeed(refuse(error.status, error.detail))))

/** A request or upgrade on an IDE host: to its sandbox's IDE port, unless it comes from another origin. */
const ideRoute = Effect.fn("runtimeApi.vscode.ideRoute")(function*(host: IdeHost, headers: IncomingHttpHeaders) {
  const sandbox = yield* servingSandbox(host.runtimeId, host)
  if ("_tag" in sandbox) return sandbox
  if (fromAnotherOrigin(headers)) return refuse(403, "Refused: a request from a page of another origin")
  const url = new URL(sandbox.vscodeUrl!)
  return { _tag: "Forward", host: url.hostname, port: Number(url.port) } satisfies Route
})

const digest = (value: string) => createHash("sha256").update(value).digest()

/** The IDE's connection token as the sandbox's action server hands it out now, or undefined. */
const currentToken = (sandbox: Sandbox) =>
  Effect.tryPromise(async (signal) => {
    const answer = await fetch(`${sandbox.serverUrl}/vscode/connection_token`, {
      headers: { [SESSION_KEY_HEADER]: Redacted.value(sandbox.sessionApiKey) },
      signal
    })
    const { token } = (await answer.json()) as { token?: unknown }
    return typeof token === "string" && token !== "" ? token : undefined
  }).pipe(Effect.timeout("10 seconds"), Effect.orElseSucceed(() => undefined))

/**
 * The path-mode entry: with the IDE's valid `tkn`, a redirect to the same target on the IDE's host
 * (the token kept: the sandbox sets its cookie there); else refused. An upgrade is refused: the
 * IDE's WebSockets are served on its host only.
 */
const entryRoute = Effect.fn("runtimeApi.vscode.entryRoute")(
  function*(target: VsCodeTarget, hosting: IdeHosting, upgrade: boolean) {
    const sandbox = yield* servingSandbox(target.runtimeId)
    if ("_tag" in sandbox) return sandbox
    if (hosting.domain === undefined) {
      return refuse(404, "VS Code is served on a host per sandbox: the API has no domain for them (--vscode-domain)")
    }
    const given = new URL(target.rest, "http://vscode").searchParams.get("tkn")
    const token = upgrade || given === null ? undefined : yield* currentToken(sandbox)
    if (given === null || token === undefined || !timingSafeEqual(digest(given), digest(token))) {
      return refuse(403, "Invalid VS Code connection token")
    }
    return {
      _tag: "Redirect",
      location: `${hosting.origin(ideHostLabel(sandbox.runtimeId, sandbox.sessionApiKey))}${target.rest}`
    } satisfies Route
  }
)

const detailBody = (detail: string) => JSON.stringify({ detail })

/** Forward one HTTP request and stream the answer back; done when the response closes. */
const forwardRequest = (request: IncomingMessage, response: ServerResponse, route: Route, runtimeId: string) =>
  Effect.callback<void>((resume) => {
    // The browser may have gone while the sandbox was looked up.
    if (response.destroyed) return resume(Effect.void)
    if (route._tag !== "Forward") {
      if (route._tag === "Redirect") response.writeHead(302, { location: route.location }).end()
      else response.writeHead(route.status, { "content-type": "application/json" }).end(detailBody(route.detail))
      return resume(Effect.void)
    }
    const upstream = httpRequest({
      host: route.host,
      port: route.port,
      method: request.method,
      path: request.url,
      headers: kept(request.headers, NOT_FORWARDED)
    })
    upstream.on("response", (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.statusMessage, kept(answer.headers, NOT_ANSWERED))
      // An answer cut short is cut short for the browser too, not left hanging.
      answer.on("error", () => response.destroy()).pipe(response)
    })
    upstream.on("error", (error) => {
      if (response.headersSent) return void response.destroy()
      response.writeHead(502, { "content-type": "application/json" }).end(
        detailBody(`VS Code of runtime ${runtimeId} is not reachable: ${error.message}`)
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
 * Splice an upgrade to the IDE port: the handshake as received (the keys left out), then bytes
 * both ways until either side closes. The IDE's own answer (101, or 403 without the token) goes
 * back as it is. Data from the browser counts as activity.
 */
const forwardUpgrade = (request: IncomingMessage, client: Socket, head: Buffer, route: Route, touch: () => void) =>
  Effect.callback<void>((resume) => {
    if (client.destroyed) return resume(Effect.void)
    if (route._tag !== "Forward") {
      const [status, detail] = route._tag === "Refuse" ? [route.status, route.detail] : [403, "Refused"]
      const body = detailBody(detail)
      client.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      )
      return resume(Effect.void)
    }
    const upstream = connect(route.port, route.host)
    upstream.write(requestHead(request, request.url, NOT_FORWARDED_ON_UPGRADE))
    if (head.length > 0) upstream.write(head)
    client.on("data", touch)
    splice(client, upstream, () => resume(Effect.void))
    return Effect.sync(() => {
      client.destroy()
      upstream.destroy()
    })
  })

/** What of a request is VS Code's: a request on an IDE host, the path-mode entry, or neither. */
const divertedOf = (request: IncomingMessage, domain: string | undefined) => {
  const host = domain === undefined ? undefined : ideHostOf(request.headers.host, domain)
  if (host !== undefined) return { runtimeId: host.runtimeId, host, entry: undefined }
  const entry = vscodeTarget(request.url ?? "")
  return entry === undefined ? undefined : { runtimeId: entry.runtimeId, host: undefined, entry }
}

/**
 * Take the IDE's requests and upgrades off `server` (made by the caller, not yet listening) before
 * its other listeners, the Effect app's, see them; each is handled in a fiber of the current scope
 * (its release ends open WebSockets, which the HTTP server's close does not).
 */
export const divertVsCode = Effect.fn("runtimeApi.divertVsCode")(function*(server: Server, hosting: IdeHosting) {
  const services = yield* Effect.context<Sandboxes | Activity>()
  const scope = yield* Effect.scope
  const activity = Context.get(services, Activity)
  const fork = (effect: Effect.Effect<void, never, Sandboxes | Activity>) =>
    void Fiber.runIn(Effect.runForkWith(services)(effect), scope)
  const emit = server.emit.bind(server)
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    const request = args[0] as IncomingMessage | undefined
    const diverted = request !== undefined && (event === "request" || event === "checkContinue" || event === "upgrade")
      ? divertedOf(request, hosting.domain)
      : undefined
    if (diverted === undefined) return emit(event, ...args)
    const upgrade = event === "upgrade"
    const route = diverted.host !== undefined
      ? ideRoute(diverted.host, request!.headers)
      : entryRoute(diverted.entry!, hosting, upgrade)
    if (upgrade) {
      const [, socket, head] = args as [IncomingMessage, Socket, Buffer]
      socket.on("error", () => undefined)
      fork(Effect.flatMap(
        route,
        (r) => forwardUpgrade(request!, socket, head, r, () => activity.touch(diverted.runtimeId))
      ))
      return true
    }
    const response = args[1] as ServerResponse
    if (event === "checkContinue") response.writeContinue()
    fork(Effect.flatMap(route, (r) => forwardRequest(request!, response, r, diverted.runtimeId)))
    return true
  }) as Server["emit"]
  return server
})
