/**
 * What the cloud providers' stand-ins (e2b/, daytona/, runloop/) share: an API failure with its
 * HTTP status, JSON answers and bodies over HTTP/1.1 or HTTP/2 (node:http2's compatibility API has
 * the same request and response shape), their containers found and removed by the stand-in's
 * label, and their proxies to a sandbox's port, WebSockets included.
 */
import Docker from "dockerode"
import {
  type IncomingHttpHeaders,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse
} from "node:http"
import { connect } from "node:net"
import type { Duplex } from "node:stream"

export const docker = new Docker()

/** An API failure with the provider's status and message. */
export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

/** The response side both `node:http` and `node:http2`'s compatibility API offer. */
interface JsonResponse {
  writeHead(status: number, headers: Record<string, string>): unknown
  end(text: string): unknown
}

export const json = (response: JsonResponse, status: number, body: unknown) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json" })
  response.end(text)
}

/** A request's JSON body (`{}` when empty). */
export const readJson = async (request: AsyncIterable<unknown>): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString("utf8")
  return text === "" ? {} : JSON.parse(text)
}

/** Ids of the containers labelled `label=instance` (any instance when omitted), running or not. */
export const labelledContainers = async (label: string, instance?: string): Promise<Array<string>> => {
  const filters = JSON.stringify({ label: [instance === undefined ? label : `${label}=${instance}`] })
  return (await docker.listContainers({ all: true, filters })).map((c) => c.Id)
}

/** Remove every container labelled `label=instance`. */
export const removeLabelled = async (label: string, instance: string): Promise<void> => {
  for (const id of await labelledContainers(label, instance)) {
    await docker.getContainer(id).remove({ force: true, v: true })
  }
}

/** Where a stand-in's proxy sends a port's traffic, and how it presents it. */
export interface ProxyTarget {
  readonly host: string
  readonly port: number
  /** The path (and query) at the port. */
  readonly path: string
  /** The proxy's own credential, not passed on. */
  readonly dropHeader?: string
  /** The `Host` the provider's proxy sends (default: the one the client sent). */
  readonly hostHeader?: string
  /**
   * The path the stand-in serves the port under. The providers serve a port at the root of a host
   * of its own, which needs wildcard DNS; the stand-ins serve it under a path instead, so a redirect
   * to an absolute path (VS Code's token check redirects to `/`) is kept under it.
   */
  readonly prefix?: string
}

/**
 * The headers sent on: the client's, less the proxy's credential, with `X-Forwarded-Host` naming
 * the host the client reached, as the providers' proxies tell the service the public host (VS
 * Code checks a WebSocket's `Origin` against it, and builds its own URLs from it).
 */
const forwardedHeaders = (request: IncomingMessage, target: ProxyTarget): IncomingHttpHeaders => {
  const headers: IncomingHttpHeaders = { ...request.headers, "x-forwarded-host": request.headers.host }
  if (target.dropHeader !== undefined) delete headers[target.dropHeader]
  if (target.hostHeader !== undefined) headers.host = target.hostHeader
  return headers
}

/** A redirect's `Location`, kept under the stand-in's prefix when it is an absolute path. */
const underPrefix = (location: string | undefined, prefix: string | undefined) =>
  location !== undefined && prefix !== undefined && location.startsWith("/") && !location.startsWith("//")
    ? `${prefix}${location}`
    : location

/**
 * Forward `request` to the target, streaming both ways; `badGateway` answers when nothing listens
 * there. A client that hangs up (an interrupted action) hangs up on the server too, as a provider's
 * proxy does.
 */
export const proxyTo = (
  request: IncomingMessage,
  response: ServerResponse,
  target: ProxyTarget,
  badGateway: () => void
) => {
  const upstream = httpRequest(
    {
      host: target.host,
      port: target.port,
      method: request.method,
      path: target.path,
      headers: forwardedHeaders(request, target)
    },
    (answer) => {
      const location = underPrefix(answer.headers.location, target.prefix)
      response.writeHead(answer.statusCode ?? 502, {
        ...answer.headers,
        ...(location === undefined ? {} : { location })
      })
      answer.pipe(response)
    }
  )
  upstream.on("error", () => {
    if (!response.headersSent) badGateway()
    else response.destroy()
  })
  response.on("close", () => {
    if (!response.writableFinished) upstream.destroy()
  })
  request.pipe(upstream)
}

/**
 * Forward a WebSocket (an HTTP upgrade) to the target, its head with the headers `proxyTo` sends,
 * then pass bytes both ways until either side ends, as a provider's proxy carries VS Code's
 * WebSockets.
 */
export const proxyUpgradeTo = (request: IncomingMessage, socket: Duplex, head: Buffer, target: ProxyTarget) => {
  const lines = [`${request.method} ${target.path} HTTP/${request.httpVersion}`]
  for (const [name, value] of Object.entries(forwardedHeaders(request, target))) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) lines.push(`${name}: ${one}`)
  }
  const upstream = connect(target.port, target.host, () => {
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`)
    if (head.length > 0) upstream.write(head)
    upstream.pipe(socket).pipe(upstream)
  })
  const drop = () => {
    socket.destroy()
    upstream.destroy()
  }
  upstream.on("error", drop).on("close", drop)
  socket.on("error", drop).on("close", drop)
}

/** A refusal on a connection that asked for an upgrade: the status and message, then the end. */
export const refuseUpgrade = (socket: Duplex, error: ApiError) =>
  socket.end(
    `HTTP/1.1 ${error.status} ${error.message}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n` +
      JSON.stringify({ message: error.message })
  )

/**
 * The sockets of `server` that were upgraded (WebSockets): the HTTP server no longer closes them,
 * so a stand-in's `close()` destroys them itself. Nor does it listen for their errors any more: a
 * client that dies with its upgrade still being answered (Daytona's SDK keeps retrying its
 * Socket.IO connection, which a stand-in refuses) resets the socket, and an `error` nobody listens
 * for would crash the test process. Each one is destroyed on error from the moment it is upgraded.
 */
export const upgradedSockets = (server: Server): Set<Duplex> => {
  const open = new Set<Duplex>()
  server.on("upgrade", (_request: IncomingMessage, socket: Duplex) => {
    open.add(socket)
    socket.on("error", () => socket.destroy())
    socket.on("close", () => open.delete(socket))
  })
  return open
}

/** Tries of a `docker pause` the engine refused while the container still ran. */
const PAUSE_TRIES = 5

/**
 * `docker pause` where it stands for a provider's pause (E2B's and Daytona's snapshot of a running
 * VM). On a loaded CI machine the engine now and then refused one, and the sandbox was left in
 * `error` (Daytona) or `pausing` (E2B): a refusal of our engine's, not of the service's (runc's
 * cgroup v1 freezer gives up on tasks that are slow to freeze, "unable to freeze"). It is tried
 * again while the container still runs, and what the engine said goes to the test's log.
 */
export const pauseContainer = async (id: string): Promise<void> => {
  const container = docker.getContainer(id)
  for (let attempt = 1;; attempt++) {
    try {
      return await container.pause()
    } catch (error) {
      const state = await container.inspect().then((info) => info.State, () => undefined)
      if (state?.Paused === true) return
      if (state?.Running !== true || attempt === PAUSE_TRIES) throw error
      console.error(`stand-in: the engine refused to pause ${id} (try ${attempt} of ${PAUSE_TRIES}): ${String(error)}`)
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
    }
  }
}
