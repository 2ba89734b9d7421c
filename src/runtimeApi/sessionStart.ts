/**
 * `/start`'s rule, the same on every backend: the session's sandbox as it is when running (a
 * client that lost its answer gets the same one again), resumed when paused, replaced when
 * stopped; a new one only below `maxSandboxes` (429 beyond: OpenHands' client retries). One
 * start at a time per API server, so the count and the create that adds one do not interleave.
 */
import { Effect, Semaphore } from "effect"
import { ApiError } from "./errors.ts"
import { type Sandbox, Sandboxes } from "./sandboxes.ts"
import type { StartRequest } from "./schemas.ts"

/**
 * A backend's service: its own operations, and `start` made of them and `create` (which makes a
 * sandbox, leaving nothing when it fails, and answers its runtime id).
 */
export const withSessionStart = Effect.fn("withSessionStart")(function*(
  steps: Omit<Sandboxes["Service"], "start">,
  create: (request: StartRequest) => Effect.Effect<string, ApiError>,
  maxSandboxes: number | undefined
) {
  const starting = yield* Semaphore.make(1)
  const start = Effect.fn("runtimeApi.start")(function*(request: StartRequest) {
    const existing = yield* steps.bySession(request.session_id)
    if (existing?.status === "running") return existing
    if (existing?.status === "paused") {
      yield* steps.resume(existing)
      return { ...existing, status: "running" } satisfies Sandbox
    }
    if (existing !== undefined) yield* steps.stop(existing)
    if (maxSandboxes !== undefined) {
      const live = (yield* steps.list).filter((s) => s.status !== "stopped").length
      if (live >= maxSandboxes) {
        return yield* new ApiError({
          status: 429,
          detail: `Too many sandboxes: ${live} of at most ${maxSandboxes} are running or paused; ` +
            "stop one or try again later"
        })
      }
    }
    const runtimeId = yield* create(request)
    // Read back from the engine, as every later answer will be.
    const sandbox = yield* steps.byRuntime(runtimeId)
    if (sandbox === undefined) {
      return yield* new ApiError({ status: 500, detail: `Runtime ${runtimeId} vanished as it started` })
    }
    return sandbox
  })
  return Sandboxes.of({ ...steps, start: (request) => starting.withPermits(1)(start(request)) })
})
