/**
 * Unknown paths and wrong methods answer as FastAPI does for OpenHands:
 * `404 {"detail": "Not Found"}` and `405 {"detail": "Method Not Allowed"}`
 * (the router alone sends an empty 404).
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { detail } from "./responses.ts"
import { ENDPOINTS } from "./routes/paths.ts"

const knownPaths: ReadonlySet<string> = new Set(Object.values(ENDPOINTS).map(([, path]) => path))

const isRouteNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null &&
  (error as { reason?: { _tag?: string } }).reason?._tag === "RouteNotFound"

export const notFound = HttpRouter.middleware((httpEffect) =>
  Effect.catch(httpEffect, (error) =>
    isRouteNotFound(error)
      ? Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        return knownPaths.has(new URL(request.url, "http://server").pathname)
          ? detail(405, "Method Not Allowed")
          : detail(404, "Not Found")
      })
      : Effect.fail(error)), { global: true })
