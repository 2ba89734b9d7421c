/**
 * A scripted runtime API for RemoteRuntime's tests: a real HTTP server on loopback that answers
 * each `METHOD /path` with the answers a test chose (in order, the last one repeating) and records
 * every request it got (headers, and the body: JSON parsed, multipart as text), so a test asserts what the client sent. Paths under
 * `/rt/` are the runtime's URL: forwarded to a real action server (`target`), unless a test queued
 * failed answers for it (`proxyFailures`), as the API's proxy answers for a paused or restarting
 * runtime.
 */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Answer {
  readonly status: number
  readonly body?: unknown
}

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

export interface ScriptedApi {
  readonly url: string
  /** The runtime URL to hand out in `/start` answers: the proxy to the action server. */
  readonly runtimeUrl: string
  /** Requests to the API (not the proxied ones), in order. */
  readonly requests: Array<Recorded>
  /** Status codes the proxy answers with, in order, before it forwards again. */
  readonly proxyFailures: Array<number>
  /** `METHOD /path` of every API request, in order. */
  readonly calls: () => Array<string>
}

const readBody = (request: import("node:http").IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
  })

/** Start the scripted API in the scope; `script` maps `METHOD /path` to its answers, `target` is the action server. */
export const scriptedApi = (script: Record<string, Array<Answer>>, target?: string) =>
  Effect.gen(function*() {
    const requests: Array<Recorded> = []
    const proxyFailures: Array<number> = []
    // Read from `script` on first use: a test may complete it once it knows `runtimeUrl`.
    const queues = new Map<string, Array<Answer>>()
    const server = yield* Effect.acquireRelease(
      Effect.callback<Server>((resume) => {
        const http = createServer(async (request, response) => {
          const path = request.url ?? "/"
          const bytes = await readBody(request)
          if (path.startsWith("/rt/")) {
            const failure = proxyFailures.shift()
            if (failure !== undefined || target === undefined) {
              response.writeHead(failure ?? 502, { "content-type": "application/json" })
              response.end(JSON.stringify({ detail: `proxy says ${failure ?? 502}` }))
              return
            }
            const forwarded = await fetch(`${target}${path.slice(3)}`, {
              method: request.method ?? "GET",
              headers: Object.fromEntries(
                Object.entries(request.headers).filter(([name]) =>
                  ["content-type", "x-session-api-key"].includes(name)
                ) as Array<[string, string]>
              ),
              ...(bytes.length === 0 ? {} : { body: new Uint8Array(bytes) })
            })
            response.writeHead(forwarded.status, {
              "content-type": forwarded.headers.get("content-type") ?? "application/octet-stream"
            })
            response.end(Buffer.from(await forwarded.arrayBuffer()))
            return
          }
          const text = bytes.toString("utf8")
          requests.push({
            method: request.method ?? "GET",
            path,
            headers: request.headers,
            body: text === ""
              ? undefined
              : request.headers["content-type"]?.startsWith("application/json") === true
              ? JSON.parse(text)
              : text
          })
          // Scripted by path: the query (an image name, a build id) is for the test to check.
          const key = `${request.method} ${path.split("?")[0]}`
          if (!queues.has(key) && script[key] !== undefined) queues.set(key, [...script[key]])
          const queue = queues.get(key)
          const answer = queue === undefined || queue.length === 0
            ? { status: 500, body: { detail: `unscripted ${request.method} ${path}` } }
            : queue.length === 1
            ? queue[0]!
            : queue.shift()!
          response.writeHead(answer.status, { "content-type": "application/json" })
          response.end(answer.body === undefined ? "{}" : JSON.stringify(answer.body))
        })
        http.listen(0, "127.0.0.1", () => resume(Effect.succeed(http)))
      }),
      (http) =>
        Effect.callback<void>((resume) => {
          http.closeAllConnections()
          http.close(() => resume(Effect.void))
        })
    )
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return {
      url,
      runtimeUrl: `${url}/rt`,
      requests,
      proxyFailures,
      calls: () => requests.map((r) => `${r.method} ${r.path}`)
    } satisfies ScriptedApi
  })
