/**
 * HTTP as a browser sends it to an IDE's own host: `ide-<h>.localhost` and the runtime API's
 * `<runtime_id>-<mac>.localhost` are loopback to Chromium and Firefox, which resolve every
 * `*.localhost` name themselves, but not to Node's resolver (glibc has no such rule). These
 * requests connect to 127.0.0.1 for such a name and keep it in `Host`, as the browser would.
 */
import { createHash, randomBytes } from "node:crypto"
import { lookup as dnsLookup, type LookupAllOptions } from "node:dns"
import { type IncomingHttpHeaders, request } from "node:http"
import { request as httpsRequest } from "node:https"

type LookupCallback = (error: NodeJS.ErrnoException | null, ...answer: Array<unknown>) => void

/** Node's resolver, but `*.localhost` is 127.0.0.1 (Node asks for `all` addresses when it races families). */
export const loopbackLookup = (hostname: string, options: LookupAllOptions, callback: LookupCallback): void => {
  if (hostname !== "localhost" && !hostname.endsWith(".localhost")) return void dnsLookup(hostname, options, callback)
  if (options.all === true) return callback(null, [{ address: "127.0.0.1", family: 4 }])
  callback(null, "127.0.0.1", 4)
}

export interface IdeAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** For an upgrade: a 101 carrying the handshake's own `Sec-WebSocket-Accept`. */
  readonly accepted: boolean
}

/** RFC 6455's answer to `key`. */
const acceptOf = (key: string) =>
  createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64")

/**
 * One request (or, with `upgrade`, a WebSocket handshake) at `url`, redirects not followed; the
 * answer's status, headers and body (101 for an upgrade taken).
 */
export const ideRequest = (
  url: string,
  options: { readonly headers?: Record<string, string>; readonly upgrade?: boolean; readonly method?: string } = {}
) =>
  new Promise<IdeAnswer>((resolve, reject) => {
    const key = randomBytes(16).toString("base64")
    const handshake = options.upgrade === true
      ? { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key }
      : {}
    const sent = (url.startsWith("https:") ? httpsRequest : request)(url, {
      method: options.method ?? "GET",
      headers: { ...handshake, ...options.headers },
      lookup: loopbackLookup as never
    })
    sent.on("upgrade", (answer, socket) => {
      socket.destroy()
      resolve({
        status: 101,
        headers: answer.headers,
        body: "",
        accepted: answer.headers["sec-websocket-accept"] === acceptOf(key)
      })
    })
    sent.on("response", (answer) => {
      let body = ""
      answer.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
      answer.on(
        "end",
        () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body, accepted: false })
      )
      answer.on("error", reject)
    })
    sent.setTimeout(30_000, () => sent.destroy(new Error(`${url}: no answer within 30 s`)))
    sent.on("error", reject).end()
  })
