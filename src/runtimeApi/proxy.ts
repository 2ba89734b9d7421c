/**
 * Proxy mode: `/<runtime_id>/<path>` is forwarded to that sandbox's action server, so clients need
 * to reach only the API server's port (OpenHands' path mode, spec §14). The request must carry the
 * sandbox's own session key, checked here against that sandbox's record before anything is
 * forwarded: a key of one sandbox never opens another's path. The action server's open paths
 * (`/alive`, `/server_info`: what clients wait on before they use the key) pass without one, as
 * they would reach the server directly; a keyless `/server_info` is answered with its clocks only,
 * whatever server the sandbox runs (no host facts).
 *
 * `/<runtime_id>/work-<n>/<path>` goes to the sandbox's n-th app port instead (`work_hosts` in
 * proxy mode, OpenHands' path-mode name for them), with the same key check; the key itself is
 * not forwarded there (what listens on an app port is whatever the agent started, and
 * KubernetesRuntime-style pods never hold the key). Plain HTTP only: an upgrade to a WebSocket is
 * not carried (fetch cannot); VS Code's `/<runtime_id>/vscode/...`, which needs them, is taken off
 * the server before this proxy sees it (vscodeProxy.ts). The API key (`X-API-Key`) and
 * hop-by-hop headers are not forwarded; bodies stream both ways (NDJSON streams pass through as
 * they are written). Answers come back sandboxed (`Content-Security-Policy: sandbox`, no
 * `Service-Worker-Allowed`): a page a sandbox serves on the API's origin runs in an opaque origin.
 */
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { IncomingMessage } from "node:http"
import { keyMatcher, OPEN_PATHS, sessionKeyHeader } from "../server/auth.ts"
import { detail } from "../server/responses.ts"
import { ENDPOINTS } from "../server/routes/paths.ts"
import { openServerInfo } from "../server/serverInfo.ts"
import { Activity } from "./activity.ts"
import { type Sandbox, SANDBOX_APP_PORTS, Sandboxes } from "./sandboxes.ts"

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

/** Beside those: the sandbox's key, which an app port does not get. */
const NOT_FORWARDED_TO_APPS = new Set([...NOT_FORWARDED, "x-session-api-key", "authorization"])

const forwardedHeaders = (headers: Readonly<Record<string, string>>, dropped: ReadonlySet<string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name.toLowerCase())))

/** The path-mode prefix of app port `index` (from 0) in `work_hosts`. */
export const workHostPath = (index: number) => `/work-${index + 1}`

/**
 * Where `target` goes in the sandbox: the action server, or an app port for `/work-<n>/...`
 * (undefined: an app port that is not published now).
 */
const upstreamOf = (sandbox: Sandbox, target: string) => {
  const app = /^\/work-(\d+)(?=[/?]|$)/.exec(target)
  if (app === null) return { base: sandbox.serverUrl, rest: target, dropped: NOT_FORWARDED }
  const port = SANDBOX_APP_PORTS[Number(app[1]) - 1]
  const base = Object.entries(sandbox.workHosts).find(([, p]) => p === port)?.[0]
  return { base, rest: target.slice(app[0].length) || "/", dropped: NOT_FORWARDED_TO_APPS }
}

/** Forward the current request (`target`: the path and query after `/<runtime_id>`) to the runtime. */
export const proxyRequest = Effect.fn("runtimeApi.proxy")(function*(runtimeId: string, target: string) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const sandboxes = yield* Sandboxes
  const sandbox = yield* sandboxes.byRuntime(runtimeId)
  if (sandbox === undefined) return detail(404, `Runtime ${runtimeId} not found`)
  const path = target.split("?")[0]!
  const keyed = keyMatcher(sandbox.sessionApiKey)(sessionKeyHeader(request.headers))
  if (!OPEN_PATHS.has(path) && !keyed) return detail(403, "Invalid Session API Key")
  // 503 for a paused runtime: OpenHands' client resumes it (keep-alive) and tries again.
  if (sandbox.status === "paused") return detail(503, `Runtime ${runtimeId} is paused`)
  if (sandbox.serverUrl === undefined) return detail(502, `Runtime ${runtimeId} is stopped`)
  const upstream = upstreamOf(sandbox, target)
  if (upstream.base === undefined) return detail(404, `Runtime ${runtimeId} has no app port ${target.split("/")[1]}`)
  ;(yield* Activity).touch(runtimeId)
  const hasBody = request.method !== "GET" && request.method !== "HEAD"
  const answer = yield* Effect.tryPromise({
    try: (signal) =>
      fetch(`${upstream.base}${upstream.rest}`, {
        method: request.method,
        headers: forwardedHeaders(request.headers, upstream.dropped),
        // The incoming body as it arrives (Node's fetch takes an async iterable with `duplex: "half"`).
        ...(hasBody ? { body: request.source as IncomingMessage as unknown as BodyInit, duplex: "half" } : {}),
        redirect: "manual",
        signal
      } as RequestInit),
    catch: (error) => error as Error
  }).pipe(Effect.result)
  if (answer._tag === "Failure") {
    return detail(502, `Runtime ${runtimeId} is not reachable: ${answer.failure.cause ?? answer.failure.message}`)
  }
  if (!keyed && path === SERVER_INFO_PATH) return yield* openAnswer(answer.success)
  // The API's origin is every sandbox's: no page a sandbox serves through it may run as that
  // origin (a script there could register a service worker over every other sandbox's paths).
  return HttpServerResponse.fromWeb(answer.success).pipe(
    HttpServerResponse.removeHeader("transfer-encoding"),
    HttpServerResponse.removeHeader("service-worker-allowed"),
    HttpServerResponse.setHeader("content-security-policy", "sandbox")
  )
})

const SERVER_INFO_PATH = ENDPOINTS.serverInfo[1]

/**
 * A keyless `/server_info` answer cut to its clocks, as our server cuts it (server/serverInfo.ts):
 * a sandbox running OpenHands' own server (a `/start` with a `command`) tells anyone the host
 * disk's size and use there.
 */
const openAnswer = (answer: Response) =>
  Effect.promise(() => answer.json().catch(() => undefined)).pipe(
    Effect.map((info) =>
      answer.ok && typeof info === "object" && info !== null
        ? HttpServerResponse.jsonUnsafe(openServerInfo(info as Record<string, unknown>))
        : detail(answer.status === 200 ? 502 : answer.status, "The runtime's server_info answer is not JSON")
    )
  )
