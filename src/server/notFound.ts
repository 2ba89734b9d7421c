/**
 * Unknown paths and wrong methods answer as FastAPI does for OpenHands:
 * `404 {"detail": "Not Found"}` and `405 {"detail": "Method Not Allowed"}`
 * (the router alone sends an empty 404). Applied by the request gate (auth.ts)
 * with the path it parsed.
 */
import { Effect } from "effect"
import { detail } from "./responses.ts"
import { ENDPOINTS } from "./routes/paths.ts"

const knownPaths: ReadonlySet<string> = new Set(Object.values(ENDPOINTS).map(([, path]) => path))

const isRouteNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null &&
  (error as { reason?: { _tag?: string } }).reason?._tag === "RouteNotFound"

/**
 * Run `httpEffect`; when no route matched `path`, answer 405 for a known path (one of `known`,
 * default the action server's), else 404.
 */
export const answerRouteNotFound = <A, E, R>(
  httpEffect: Effect.Effect<A, E, R>,
  path: string,
  known: ReadonlySet<string> = knownPaths
) =>
  Effect.catch(httpEffect, (error) =>
    isRouteNotFound(error)
      ? Effect.succeed(known.has(path) ? detail(405, "Method Not Allowed") : detail(404, "Not Found"))
      : Effect.fail(error))
