/**
 * `GET /alive` on Node's request, before Effect's HTTP app (server/frontDoor.ts, installed with the
 * lean `/execute_action`: leanExecute.ts). Every start waits for one, probes poll it, and on a fresh
 * server the route's first answer came ~8 ms after this one: Effect's server, router and gate
 * compile their code on their first request. The same bytes as the route (routes/info.ts); anything
 * but the plain case (a query, a body, HTTP/2) is declined, and the route answers it as before.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { writeJson } from "./rawJson.ts"
import { ENDPOINTS } from "./routes/paths.ts"

const [METHOD, PATH] = ENDPOINTS.alive

/** Answer a plain `GET /alive` (true), or leave the request untouched (false). */
export const takesAlive = (request: IncomingMessage, response: ServerResponse): boolean => {
  if (
    request.method !== METHOD || request.url !== PATH || request.httpVersionMajor !== 1 ||
    request.headers["transfer-encoding"] !== undefined || (request.headers["content-length"] ?? "0") !== "0"
  ) return false
  request.resume()
  writeJson(response, 200, { status: "ok" })
  return true
}
