/**
 * `/start`'s rule, the same on every backend: the session's sandbox as it is when running (a
 * client that lost its answer gets the same one again), resumed when paused, replaced when
 * stopped; a new one only below `maxSandboxes` (429 beyond: OpenHands' client retries). The
 * backend serialises calls (one start at a time per API server), so the count and the create
 * that adds one do not interleave.
 */
import { Effect } from "effect"
import { ApiError } from "./errors.ts"
import type { Sandbox } from "./sandboxes.ts"
import type { StartRequest } from "./schemas.ts"

export interface SessionStartSteps {
  readonly bySession: (sessionId: string) => Effect.Effect<Sandbox | undefined, ApiError>
  readonly list: Effect.Effect<ReadonlyArray<Sandbox>, ApiError>
  readonly resume: (sandbox: Sandbox) => Effect.Effect<void, ApiError>
  readonly stop: (sandbox: Sandbox) => Effect.Effect<void, ApiError>
  readonly create: (request: StartRequest) => Effect.Effect<Sandbox, ApiError>
  readonly maxSandboxes: number | undefined
}

export const sessionStart = (steps: SessionStartSteps) =>
  Effect.fn("runtimeApi.start")(function*(request: StartRequest) {
    const existing = yield* steps.bySession(request.session_id)
    if (existing?.status === "running") return existing
    if (existing?.status === "paused") {
      yield* steps.resume(existing)
      return { ...existing, status: "running" } satisfies Sandbox
    }
    if (existing !== undefined) yield* steps.stop(existing)
    if (steps.maxSandboxes !== undefined) {
      const live = (yield* steps.list).filter((s) => s.status !== "stopped").length
      if (live >= steps.maxSandboxes) {
        return yield* new ApiError({
          status: 429,
          detail: `Too many sandboxes: ${live} of at most ${steps.maxSandboxes} are running or paused; ` +
            "stop one or try again later"
        })
      }
    }
    return yield* steps.create(request)
  })
