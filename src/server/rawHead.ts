/**
 * A message's head as bytes for a socket, for proxies that hand a WebSocket over byte for byte
 * (the VS Code token proxy, the runtime API's VS Code path, the loopback header relay): after the
 * upgrade there is no HTTP layer left to write it, so the start line and the headers, as received
 * (names in their own case, repeated ones kept), are written by hand.
 */
import type { IncomingMessage } from "node:http"

/** `start`, then each received header but the `dropped` ones (lower-case names), then the blank line. */
const head = (start: string, rawHeaders: ReadonlyArray<string>, dropped: ReadonlySet<string>) => {
  const lines = [start]
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (dropped.has(rawHeaders[i]!.toLowerCase())) continue
    lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`)
  }
  return `${lines.join("\r\n")}\r\n\r\n`
}

/**
 * A request's head, for a WebSocket handed to an upstream socket: `path` replaces the target and
 * the `dropped` headers (lower-case names: a proxy's own) are left out.
 */
export const requestHead = (
  request: IncomingMessage,
  path: string = request.url ?? "/",
  dropped: ReadonlySet<string> = new Set()
): string => head(`${request.method} ${path} HTTP/${request.httpVersion}`, request.rawHeaders, dropped)

/** An answer's head (its `101`), handed back to the browser's socket. */
export const responseHead = (answer: IncomingMessage): string =>
  head(`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`, answer.rawHeaders, new Set())
