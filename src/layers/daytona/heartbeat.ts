/**
 * The owner's heartbeat on a Daytona sandbox. A cloud sandbox has no host directory to hold a
 * lease (Docker's ownerLease.ts), so the owner renews a label instead: every `renewEvery` it sets
 * `effect-sandbox.owner.renewed-at` to now, which the reaper (reaper.ts) of any other owner reads
 * through the same API. The same tick refreshes the sandbox's activity, so Daytona's auto-stop
 * (counted from the last activity) never stops a sandbox its owner still holds, however long the
 * agent stays idle; once the owner dies, auto-stop and auto-delete clean up on Daytona's side even
 * when no reaper ever runs.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Duration, Effect, Schedule } from "effect"
import { type HeartbeatOptions, LABEL } from "./labels.ts"

/** The heartbeat labels for now. */
export const heartbeatLabels = (options: HeartbeatOptions | undefined): Record<string, string> => ({
  [LABEL.renewedAt]: new Date().toISOString(),
  [LABEL.staleAfterMs]: String(Duration.toMillis(Duration.fromInputUnsafe(options?.staleAfter ?? "5 minutes")))
})

/** Renew the sandbox's heartbeat and activity every `renewEvery`, in the background, for as long as the scope lives. */
export const startHeartbeat = (sandbox: Sandbox, options: HeartbeatOptions | undefined) =>
  Effect.tryPromise(async () => {
    await sandbox.setLabels({ ...sandbox.labels, ...heartbeatLabels(options) })
    await sandbox.refreshActivity()
  }).pipe(
    Effect.catch((e) => Effect.logWarning(`cannot renew the heartbeat of Daytona sandbox ${sandbox.id}: ${e}`)),
    Effect.repeat(Schedule.spaced(options?.renewEvery ?? "30 seconds")),
    Effect.forkScoped,
    Effect.asVoid
  )
