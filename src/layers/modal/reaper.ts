/**
 * Terminates the sandboxes of owners that died on this host. Modal ends an orphan by itself when
 * its idle timeout runs out (the owner's heartbeat through the tunnel kept it busy while it lived),
 * or at its timeout; the reaper frees it sooner, as soon as a later ModalRuntime on the same host
 * sees the owner's process gone. Kept-alive sandboxes, and owners on other hosts, are left alone.
 */
import { type Duration, Effect, Schedule } from "effect"
import type { App, ModalClient } from "modal"
import { ownedHere, ownerGone, TAGS } from "../../hosted/ownerTags.ts"
import { sandboxesTagged } from "./sandboxes.ts"
import { modalCall } from "./sdk.ts"

/** One pass: terminate every sandbox of the app, ours, on this host, whose owner is gone. The ids terminated. */
export const reapOrphans = Effect.fn("ModalRuntime.reapOrphans")(function*(
  client: ModalClient,
  app: App,
  retry: Schedule.Schedule<unknown>
) {
  const orphans = (yield* sandboxesTagged(client, app, ownedHere(), retry)).filter(({ tags }) => ownerGone(tags))
  yield* Effect.forEach(
    orphans,
    ({ sandbox, tags }) =>
      modalCall(`terminate the orphaned sandbox ${sandbox.sandboxId}`, () => sandbox.terminate(), retry).pipe(
        Effect.andThen(Effect.logInfo(
          `ModalRuntime: terminated sandbox ${sandbox.sandboxId}, whose owner (pid ${tags[TAGS.ownerPid]}) is gone`
        ))
      ),
    { discard: true }
  )
  return orphans.map(({ sandbox }) => sandbox.sandboxId)
})

/** Reap at once, then every `every`, in the current scope (failures are logged, never fatal). */
export const startReaper = (
  client: ModalClient,
  app: App,
  retry: Schedule.Schedule<unknown>,
  every: Duration.Input
) =>
  reapOrphans(client, app, retry).pipe(
    Effect.catch((error) => Effect.logWarning(`ModalRuntime reaper: ${error.message}`)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.forkScoped,
    Effect.asVoid
  )
