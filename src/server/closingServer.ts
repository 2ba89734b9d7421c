/**
 * Node's HTTP server whose `close` also drops the connections still open: a client's
 * keep-alive socket (or a stream it never closed) cannot keep a stopping server waiting.
 */
import { createServer } from "node:http"

export const closingServer = () => {
  const server = createServer()
  const close = server.close.bind(server)
  server.close = (callback) => {
    close(callback)
    server.closeAllConnections()
    return server
  }
  return server
}
