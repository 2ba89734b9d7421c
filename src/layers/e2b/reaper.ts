/**
 * Removes the sandboxes of owners that died on this host. A running sandbox of a dead owner also
 * dies on E2B's side when its timeout runs out (the owner renewed it while it lived), but a paused
 * one has no timeout (E2B keeps it for up to 30 days), so the reaper kills both kinds as soon as it
 * sees the owner's process gone. Only owners on this host are judged (a pid means nothing
 * elsewhere), and sandboxes kept alive on release are left alone.
 */
import { type Duration, Effect, Schedule, type Schedule as ScheduleType } from "effect"
import { METADATA, ownedHere, ownerGone } from "../internal/ownerMetadata.ts"
import { e2bCall, type E2BConnection, type E2BSdk, sdkOptions } from "./sdk.ts"

/** One pass: kill every managed sandbox whose owner on this host is gone. The ids killed. */
export const reapOrphans = Effect.fn("E2BRuntime.reapOrphans")(function*(
  sdk: E2BSdk,
  connection: E2BConnection,
  retry: ScheduleType.Schedule<unknown>
) {
  const paginator = sdk.Sandbox.list({
    ...sdkOptions(connection),
    query: { metadata: ownedHere() }
  })
  const killed: Array<string> = []
  while (paginator.hasNext) {
    const page = yield* e2bCall("list the sandboxes of this host", () => paginator.nextItems(), retry)
    for (const listed of page) {
      if (!ownerGone(listed.metadata)) continue
      yield* e2bCall(
        `kill the orphaned sandbox ${listed.sandboxId}`,
        () => sdk.Sandbox.kill(listed.sandboxId, sdkOptions(connection)),
        retry
      )
      yield* Effect.logInfo(
        `E2BRuntime: killed sandbox ${listed.sandboxId}, whose owner (pid ${
          listed.metadata[METADATA.ownerPid]
        }) is gone`
      )
      killed.push(listed.sandboxId)
    }
  }
  return killed
})

/** Reap at once, then every `every`, in the current scope (failures are logged, never fatal). */
export const startReaper = (
  sdk: E2BSdk,
  connection: E2BConnection,
  retry: ScheduleType.Schedule<unknown>,
  every: Duration.Input
) =>
  reapOrphans(sdk, connection, retry).pipe(
    Effect.catch((error) => Effect.logWarning(`E2BRuntime reaper: ${error.message}`)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.forkScoped,
    Effect.asVoid
  )
