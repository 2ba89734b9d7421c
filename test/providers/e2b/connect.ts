/**
 * Connect-RPC framing as the e2b SDK speaks it (`@connectrpc/connect-web`, `useBinaryFormat: false`):
 * unary calls are plain JSON bodies (`application/json`), server streams are enveloped JSON
 * (`application/connect+json`): each message is a flag byte, a 4-byte big-endian length and the
 * JSON; the last envelope has flag 0x02 and carries `{}` or `{"error": {code, message}}`.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** Connect error codes with their HTTP statuses (for unary errors). */
const HTTP_STATUS: Record<string, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  unavailable: 503,
  internal: 500
}

export const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/** The request message: the body itself for unary calls, the first envelope's payload for streams. */
export const requestMessage = (request: IncomingMessage, body: Buffer): unknown => {
  const streamed = (request.headers["content-type"] ?? "").startsWith("application/connect+json")
  const json = streamed ? body.subarray(5, 5 + body.readUInt32BE(1)) : body
  return json.length === 0 ? {} : JSON.parse(json.toString("utf8"))
}

export const unaryReply = (response: ServerResponse, message: unknown) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify(message))
}

export const unaryError = (response: ServerResponse, code: string, message: string) => {
  response.writeHead(HTTP_STATUS[code] ?? 500, { "content-type": "application/json" })
  response.end(JSON.stringify({ code, message }))
}

const envelope = (flags: number, message: unknown): Buffer => {
  const json = Buffer.from(JSON.stringify(message), "utf8")
  const head = Buffer.alloc(5)
  head.writeUInt8(flags, 0)
  head.writeUInt32BE(json.length, 1)
  return Buffer.concat([head, json])
}

/** A server stream: `send` messages, then `end` (with an error, or none). */
export const openStream = (response: ServerResponse) => {
  response.writeHead(200, { "content-type": "application/connect+json" })
  return {
    // A client that went away (`disconnect()`) is written nothing more; its process runs on.
    send: (message: unknown) => {
      if (!response.writableEnded && !response.destroyed) response.write(envelope(0, message))
    },
    end: (error?: { readonly code: string; readonly message: string }) => {
      if (!response.writableEnded && !response.destroyed) {
        response.end(envelope(2, error === undefined ? {} : { error }))
      }
    }
  }
}
