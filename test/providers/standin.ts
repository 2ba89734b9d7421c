/**
 * What the cloud providers' stand-ins (daytona/, runloop/) share: an API failure with its HTTP
 * status, JSON answers and bodies over HTTP/1.1 or HTTP/2 (node:http2's compatibility API has the
 * same request and response shape), their containers found and removed by the stand-in's label, and
 * their proxies to a sandbox's port, WebSockets included.
 */
import Docker from "dockerode"
import { type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http"
import { connect, type Socket } from "node:net"

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

/**
 * Forward `request` to `host:port` at `path` (without `dropHeader`, the proxy's own credential),
 * streaming both ways; `badGateway` answers when nothing listens there. A client that hangs up
 * (an interrupted action) hangs up on the server too, as a provider's proxy does.
 */
export const proxyTo = (
  request: IncomingMessage,
  response: ServerResponse,
  target: { readonly host: string; readonly port: number; readonly path: string; readonly dropHeader: string },
  badGateway: () => void
) => {
  const headers = { ...request.headers }
  delete headers[target.dropHeader]
  const upstream = httpRequest(
    { host: target.host, port: target.port, method: request.method, path: target.path, headers },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
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
 * Forward a WebSocket (an HTTP upgrade) to `host:port` at `path` (without `dropHeader`), then pass
 * bytes both ways until either side ends, as a provider's proxy carries VS Code's WebSockets.
 */
export const proxyUpgradeTo = (
  request: IncomingMessage,
  socket: Socket,
  head: Buffer,
  target: { readonly host: string; readonly port: number; readonly path: string; readonly dropHeader: string }
) => {
  const lines = [`${request.method} ${target.path} HTTP/${request.httpVersion}`]
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() !== target.dropHeader) {
      lines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`)
    }
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
export const refuseUpgrade = (socket: Socket, error: ApiError) =>
  socket.end(
    `HTTP/1.1 ${error.status} ${error.message}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n` +
      JSON.stringify({ message: error.message })
  )
