/**
 * Set-up steps announce themselves on the runtime's status stream as OpenHands does
 * (SETTING_UP_WORKSPACE, SETTING_UP_GIT_HOOKS), then give the previous status back, so a front end
 * that shows the status sees the step start and end.
 */
import { Effect } from "effect"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"
import { Runtime } from "../services/Runtime.ts"

export const withStatus = <A, E, R>(
  status: Exclude<RuntimeStatus, "STOPPED">,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Runtime> =>
  Effect.gen(function*() {
    const rt = yield* Runtime
    const before = yield* rt.currentStatus
    yield* rt.setStatus(status)
    return yield* effect.pipe(Effect.ensuring(before === "STOPPED" ? Effect.void : rt.setStatus(before)))
  })
