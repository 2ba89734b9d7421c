/**
 * The reaper of Daytona sandboxes whose owner is gone: those labelled by a DaytonaRuntime whose
 * heartbeat (heartbeat.ts) was not renewed within the owner's own `staleAfter`. Kept-alive
 * sandboxes carry no heartbeat and are never touched, nor is any sandbox without our labels.
 * Daytona's auto-stop and auto-delete would remove them anyway; the reaper frees the quota they
 * hold sooner. It runs when a DaytonaRuntime layer starts and then every `reapEvery`.
 */
import type { Daytona, Sandbox } from "@daytonaio/sdk"
import { Duration, Effect, Schedule } from "effect"
import { daytonaCall } from "./errors.ts"
import { LABEL } from "./labels.ts"

/** Whether the sandbox's owner stopped renewing its heartbeat long enough ago. */
const ownerGone = (sandbox: Sandbox, now: number): boolean => {
  const renewedAt = Date.parse(sandbox.labels[LABEL.renewedAt] ?? "")
  const staleAfter = Number(sandbox.labels[LABEL.staleAfterMs])
  return Number.isFinite(renewedAt) && Number.isFinite(staleAfter) && now - renewedAt > staleAfter
}

/** Delete every sandbox of ours whose owner is gone; returns how many were deleted. */
export const reapOrphans = Effect.fn("reapOrphans")(function*(client: Daytona) {
  const ours = yield* daytonaCall("list sandboxes", async () => {
    const all: Array<Sandbox> = []
    for await (const sandbox of client.list({ labels: { [LABEL.managed]: "true" } })) all.push(sandbox)
    return all
  })
  const now = Date.now()
  const orphans = ours.filter((sandbox) => ownerGone(sandbox, now))
  yield* Effect.forEach(
    orphans,
    (sandbox) =>
      daytonaCall(`delete sandbox ${sandbox.id}`, () => sandbox.delete()).pipe(
        Effect.tap(() => Effect.logInfo(`reaped Daytona sandbox ${sandbox.id}: its owner's heartbeat is stale`))
      ),
    { concurrency: 4, discard: true }
  )
  return orphans.length
})

/** Reap now and then every `every`, in the background, for as long as the scope lives (failures logged). */
export const startReaper = (client: Daytona, every: Duration.Input = "2 minutes") =>
  reapOrphans(client).pipe(
    Effect.catch((e) => Effect.logWarning(`Daytona reaper: ${e.message}`).pipe(Effect.as(0))),
    Effect.repeat(Schedule.spaced(every)),
    Effect.forkScoped,
    Effect.asVoid
  )
