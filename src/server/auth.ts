/**
 * The gate every request passes before routing, deciding on ONE parse of its target
 * (requestTarget.ts), the same string the router then dispatches on:
 * 1. an ambiguous target is refused: 400 `{"detail": "Ambiguous request path: ..."}`;
 * 2. session-key authentication (spec §2.3): with a key configured, every path but
 *    `/alive` and `/server_info` needs `X-Session-API-Key` (or `Authorization: Bearer
 *    <key>`, which MCP clients send to the /mcp proxy, as FastMCP's token check takes);
 *    a missing or wrong key gets 403 `{"detail": "Invalid API Key"}`. Keys are compared in
 *    constant time (over their SHA-256, so their lengths leak nothing either);
 * 3. no route: 404/405 as FastAPI (notFound.ts).
 * One middleware, so the order of these steps cannot depend on how layers are merged.
 */
import { Effect, Redacted } from "effect"
import { type Headers, HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { answerRouteNotFound } from "./notFound.ts"
import { parseRequestTarget } from "./requestTarget.ts"
import { detail } from "./responses.ts"
import { ENDPOINTS } from "./routes/paths.ts"

const OPEN_PATHS: ReadonlySet<string> = new Set([ENDPOINTS.alive[1], ENDPOINTS.serverInfo[1]])

const digest = (value: string) => createHash("sha256").update(value).digest()

const bearer = (header: string | undefined) => header?.startsWith("Bearer ") ? header.slice(7) : undefined

/**
 * A test for `key`, in constant time over SHA-256 digests (so the lengths leak nothing either).
 * Shared with the runtime API's key check (runtimeApi/gate.ts).
 */
export const keyMatcher = (key: Redacted.Redacted<string>) => {
  const expected = digest(Redacted.value(key))
  return (given: unknown): boolean => typeof given === "string" && timingSafeEqual(digest(given), expected)
}

/** The session key a request carries: `X-Session-API-Key`, else an `Authorization: Bearer` token. */
export const sessionKeyHeader = (headers: Headers.Headers): string | undefined =>
  headers["x-session-api-key"] ?? bearer(headers["authorization"])

/** Does a request with these headers carry `key`? */
const keyCheck = (key: Redacted.Redacted<string>) => {
  const matches = keyMatcher(key)
  return (headers: Headers.Headers): boolean => matches(sessionKeyHeader(headers))
}

/**
 * The target as it came off the wire. Node's `IncomingMessage.url` is the raw target; Effect
 * rewrites an absolute-form target (`http://host/a/../b`) through `URL` into `request.url`,
 * so the raw one is what must be judged (and refused).
 */
const rawTarget = (request: HttpServerRequest.HttpServerRequest): string => {
  const url: unknown = (request.source as { readonly url?: unknown }).url
  return typeof url === "string" ? url : request.url
}

/**
 * The request's target judged once, as it came off the wire: its raw form and path, or the 400
 * answer refusing an ambiguous one. Shared with the runtime API's gate (runtimeApi/gate.ts).
 */
export const judgeTarget = (request: HttpServerRequest.HttpServerRequest):
  | { readonly _tag: "Plain"; readonly raw: string; readonly path: string }
  | { readonly _tag: "Refused"; readonly answer: HttpServerResponse.HttpServerResponse } =>
{
  const raw = rawTarget(request)
  const parsed = parseRequestTarget(raw)
  if (parsed._tag === "Refused") return { _tag: "Refused", answer: detail(400, parsed.reason) }
  // The router reads `request.url`: it must be the very target judged here.
  if (request.url !== raw) {
    return { _tag: "Refused", answer: detail(400, "Ambiguous request path: the target was rewritten.") }
  }
  return { _tag: "Plain", raw, path: parsed.target.path }
}

/** The global middleware: target check, then (with `key`) authentication, then 404/405 answers. */
export const requestGate = (key: Redacted.Redacted<string> | undefined) => {
  const authorised = key === undefined ? () => true : keyCheck(key)
  return HttpRouter.middleware((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const judged = judgeTarget(request)
      if (judged._tag === "Refused") return judged.answer
      const { path } = judged
      if (!OPEN_PATHS.has(path) && !authorised(request.headers)) return detail(403, "Invalid API Key")
      return yield* answerRouteNotFound(httpEffect, path)
    }), { global: true })
}
