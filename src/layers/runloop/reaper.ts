/**
 * Shuts down the devboxes of owners that died on this host. A dead owner's devbox also goes on
 * Runloop's side once its idle timeout passes without the owner's keep-alive (launch.ts), but it
 * holds the account's quota until then, and a suspended one has no idle clock at all; so the
 * reaper shuts down both kinds as soon as it sees the owner's process gone. Only owners on this
 * host are judged (a pid means nothing elsewhere), and devboxes kept alive on release are left.
 */
import type { Runloop } from "@runloop/api-client"
import { type Duration, Effect, Schedule, type Schedule as ScheduleType } from "effect"
import { ownedHere, ownerGone, TAGS } from "../../hosted/ownerTags.ts"
import { managedDevboxes } from "./devboxes.ts"
import { runloopCall } from "./errors.ts"

/** One pass: shut down every devbox of ours whose owner on this host is gone. The ids shut down. */
export const reapOrphans = Effect.fn("RunloopRuntime.reapOrphans")(function*(
  api: Runloop,
  retry: ScheduleType.Schedule<unknown>
) {
  const ours = yield* managedDevboxes(api, ownedHere(), retry)
  const orphans = ours.filter((devbox) => ownerGone(devbox.metadata))
  yield* Effect.forEach(
    orphans,
    (devbox) =>
      runloopCall(`shut down the orphaned devbox ${devbox.id}`, () => api.devboxes.shutdown(devbox.id), retry).pipe(
        Effect.tap(() =>
          Effect.logInfo(
            `RunloopRuntime: shut down devbox ${devbox.id}, whose owner (pid ${devbox.metadata[TAGS.ownerPid]}) is gone`
          )
        )
      ),
    { concurrency: 4, discard: true }
  )
  return orphans.map((devbox) => devbox.id)
})

/** Reap at once, then every `every`, in the current scope (failures are logged, never fatal). */
export const startReaper = (api: Runloop, retry: ScheduleType.Schedule<unknown>, every: Duration.Input) =>
  reapOrphans(api, retry).pipe(
    Effect.catch((error) => Effect.logWarning(`RunloopRuntime reaper: ${error.message}`)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.forkScoped,
    Effect.asVoid
  )
