/**
 * Proxy mode: `/<runtime_id>/<path>` is forwarded to that sandbox's action server, so clients need
 * to reach only the API server's port (OpenHands' path mode, spec §14). The request must carry the
 * sandbox's own session key, checked here against that sandbox's record before anything is
 * forwarded: a key of one sandbox never opens another's path. The action server's open paths
 * (`/alive`, `/server_info`: what clients wait on before they use the key) pass without one, as
 * they would reach the server directly. The API key (`X-API-Key`) and
 * hop-by-hop headers are not forwarded; bodies stream both ways (NDJSON streams pass through as
 * they are written).
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { IncomingMessage } from "node:http"
import { keyMatcher, OPEN_PATHS, sessionKeyHeader } from "../server/auth.ts"
import { detail } from "../server/responses.ts"
import { Activity } from "./activity.ts"
import { Sandboxes } from "./sandboxes.ts"

/** Headers that belong to one connection (RFC 9110 §7.6.1), or to this API, not to the sandbox. */
const NOT_FORWARDED = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "x-api-key"
])

const forwardedHeaders = (headers: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_FORWARDED.has(name.toLowerCase())))

/** Forward the current request (`target`: the path and query after `/<runtime_id>`) to the runtime. */
export const proxyRequest = Effect.fn("runtimeApi.proxy")(function*(runtimeId: string, target: string) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sandboxes = yield* Sandboxes
  const sandbox = yield* sandboxes.byRuntime(runtimeId)
  if (sandbox === undefined) return detail(404, `Runtime ${runtimeId} not found`)
  const open = OPEN_PATHS.has(target.split("?")[0]!)
  if (!open && !keyMatcher(sandbox.sessionApiKey)(sessionKeyHeader(request.headers))) {
    return detail(403, "Invalid Session API Key")
  }
  // 503 for a paused runtime: OpenHands' client resumes it (keep-alive) and tries again.
  if (sandbox.status === "paused") return detail(503, `Runtime ${runtimeId} is paused`)
  if (sandbox.serverUrl === undefined) return detail(502, `Runtime ${runtimeId} is stopped`)
  ;(yield* Activity).touch(runtimeId)
  const hasBody = request.method !== "GET" && request.method !== "HEAD"
  const upstream = yield* Effect.tryPromise({
    try: (signal) =>
      fetch(`${sandbox.serverUrl}${target}`, {
        method: request.method,
        headers: forwardedHeaders(request.headers),
        // The incoming body as it arrives (Node's fetch takes an async iterable with `duplex: "half"`).
        ...(hasBody ? { body: request.source as IncomingMessage as unknown as BodyInit, duplex: "half" } : {}),
        redirect: "manual",
        signal
      } as RequestInit),
    catch: (error) => error as Error
  }).pipe(Effect.result)
  if (upstream._tag === "Failure") {
    return detail(502, `Runtime ${runtimeId} is not reachable: ${upstream.failure.cause ?? upstream.failure.message}`)
  }
  const response = HttpServerResponse.fromWeb(upstream.success)
  return HttpServerResponse.removeHeader(response, "transfer-encoding")
})
