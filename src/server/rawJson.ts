/** A JSON answer written on Node's response, with the headers Effect's `HttpServerResponse.jsonUnsafe` sends. */
import type { ServerResponse } from "node:http"

export const writeJson = (response: ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}
