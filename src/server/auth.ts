/**
 * Session-key authentication (spec §2.3): with a key configured, every path but
 * `/alive` and `/server_info` needs `X-Session-API-Key` (or `Authorization: Bearer
 * <key>`, which MCP clients send to the /mcp proxy, as FastMCP's token check
 * takes); a missing or wrong key gets 403 `{"detail": "Invalid API Key"}`. Keys are compared in constant time
 * (over their SHA-256, so their lengths leak nothing either).
 */
import { Effect, Redacted } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { detail } from "./responses.ts"

const OPEN_PATHS: ReadonlySet<string> = new Set(["/alive", "/server_info"])

const digest = (value: string) => createHash("sha256").update(value).digest()

const bearer = (header: string | undefined) => header?.startsWith("Bearer ") ? header.slice(7) : undefined

export const sessionKeyMiddleware = (key: Redacted.Redacted<string>) => {
  const expected = digest(Redacted.value(key))
  return HttpRouter.middleware((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://server").pathname
      if (OPEN_PATHS.has(path)) return yield* httpEffect
      const given = request.headers["x-session-api-key"] ?? bearer(request.headers["authorization"])
      if (typeof given !== "string" || !timingSafeEqual(digest(given), expected)) {
        return detail(403, "Invalid API Key")
      }
      return yield* httpEffect
    }), { global: true })
}
