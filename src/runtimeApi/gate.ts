/**
 * The gate every runtime API request passes before routing, on one parse of its target (the
 * action server's rules, server/requestTarget.ts: an ambiguous path is a 400):
 * 1. in proxy mode, `/<runtime_id>/...` goes to that sandbox (proxy.ts: its session key, not the
 *    API key, opens it);
 * 2. with an API key configured, `X-API-Key` is required on every endpoint: missing is 401, wrong is
 *    403, compared in constant time (server/auth.ts);
 * 3. no route: 404/405 as FastAPI (server/notFound.ts).
 */
import { Effect, type Redacted } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { judgeTarget, keyMatcher } from "../server/auth.ts"
import { answerRouteNotFound } from "../server/notFound.ts"
import { detail } from "../server/responses.ts"
import { KNOWN_API_PATHS } from "./paths.ts"
import { proxyRequest } from "./proxy.ts"
import { RUNTIME_ID_PATTERN } from "./schemas.ts"

export const runtimeApiGate = (apiKey: Redacted.Redacted<string> | undefined, proxy: boolean) => {
  const matches = apiKey === undefined ? undefined : keyMatcher(apiKey)
  return HttpRouter.middleware((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const judged = judgeTarget(request)
      if (judged._tag === "Refused") return judged.answer
      const { path, raw } = judged
      const first = path.split("/")[1] ?? ""
      if (proxy && RUNTIME_ID_PATTERN.test(first)) {
        return yield* proxyRequest(first, raw.slice(first.length + 1) || "/")
      }
      if (matches !== undefined) {
        const given = request.headers["x-api-key"]
        if (given === undefined) return detail(401, "Missing X-API-Key header")
        if (!matches(given)) return detail(403, "Invalid API Key")
      }
      return yield* answerRouteNotFound(httpEffect, path, KNOWN_API_PATHS)
    }), { global: true })
}
