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
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { timingSafeEqual } from "node:crypto"
import { SESSION_KEY_HEADER } from "../telemetry/secretHeaders.ts"
import { answerRouteNotFound } from "./notFound.ts"
import { parseRequestTarget } from "./requestTarget.ts"
import { detail } from "./responses.ts"
import { ENDPOINTS } from "./routes/paths.ts"
import { keyDigest } from "./sessionKey.ts"

/** The paths open without a key (liveness for probes and waits); the runtime API's proxy opens the same. */
export const OPEN_PATHS: ReadonlySet<string> = new Set([ENDPOINTS.alive[1], ENDPOINTS.serverInfo[1]])

const bearer = (header: unknown) =>
  typeof header === "string" && header.startsWith("Bearer ") ? header.slice(7) : undefined

/** A request's headers as Effect's request and Node's both hold them (lower-case names). */
export type RequestHeaders = { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/**
 * A test for the key whose SHA-256 is `expected`, in constant time over digests (so the lengths
 * leak nothing either). The server may know only the digest (KubernetesRuntime's pods).
 */
export const digestMatcher = (expected: Redacted.Redacted<Buffer>) => (given: unknown): boolean =>
  typeof given === "string" && timingSafeEqual(keyDigest(given), Redacted.value(expected))

/** A test for `key`; shared with the runtime API's key check (runtimeApi/gate.ts). */
export const keyMatcher = (key: Redacted.Redacted<string>) =>
  digestMatcher(Redacted.make(keyDigest(Redacted.value(key))))

/** The session key a request carries: `X-Session-API-Key`, else an `Authorization: Bearer` token. */
export const sessionKeyHeader = (headers: RequestHeaders): unknown =>
  headers[SESSION_KEY_HEADER] ?? bearer(headers["authorization"])

/**
 * Does a request with these headers carry the key whose SHA-256 is `keySha256`? Every request
 * does when the server has no key. The gate asks it of every path but the open ones;
 * `/server_info` asks it to decide how much to tell (routes/info.ts).
 */
export const keyCheck = (keySha256: Redacted.Redacted<Buffer> | undefined): (headers: RequestHeaders) => boolean => {
  if (keySha256 === undefined) return () => true
  const matches = digestMatcher(keySha256)
  return (headers) => matches(sessionKeyHeader(headers))
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

/** The global middleware: target check, then (with a key's digest) authentication, then 404/405 answers. */
export const requestGate = (keySha256: Redacted.Redacted<Buffer> | undefined) => {
  const authorised = keyCheck(keySha256)
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
