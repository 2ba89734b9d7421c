/**
 * The one reaper of every hosted runtime: the sandboxes of owners that died on this host, removed.
 * A running orphan would also end on the provider's side once nobody keeps it alive, but a paused
 * or stopped one has no clock, so the reaper removes both kinds as soon as it sees the owner's
 * process gone. Only owners on this host are judged (ownerTags.ts), and sandboxes kept alive on
 * release are left alone. Their snapshots go the same way, unless kept (`keep: true`).
 */
import { type Duration, Effect, Schedule } from "effect"
import type { ProviderError } from "../schema/errors.ts"
import type { Driver } from "../services/Driver.ts"
import { ownedHere, ownerGone, TAGS } from "./ownerTags.ts"

/** Remove each of `listed` whose owner is gone, saying so as `what`. The provider ids removed. */
const removeOrphans = Effect.fnUntraced(
  function*<F extends { readonly id: string; readonly tags: Readonly<Record<string, string>> }>(
    provider: string,
    what: string,
    listed: ReadonlyArray<F>,
    remove: (found: F) => Effect.Effect<void, ProviderError>
  ) {
    const reaped: Array<string> = []
    for (const found of listed) {
      if (!ownerGone(found.tags)) continue
      yield* remove(found)
      yield* Effect.logInfo(
        `${provider}: removed ${what} ${found.id}, whose owner (pid ${found.tags[TAGS.ownerPid]}) is gone`
      )
      reaped.push(found.id)
    }
    return reaped
  }
)

/**
 * One pass: destroy every sandbox of this host whose owner is gone, and every snapshot of such an
 * owner not kept on purpose. The provider ids removed.
 */
export const reapOrphans = Effect.fn("hosted.reap")(function*<S>(provider: string, driver: Driver<S>) {
  yield* Effect.annotateCurrentSpan("provider", provider)
  const sandboxes = yield* driver.find(ownedHere())
  const reaped = yield* removeOrphans(provider, "sandbox", sandboxes, (found) => driver.destroy(found.sandbox))
  const snapshots = driver.snapshot
  if (snapshots === undefined) return reaped
  const taken = yield* snapshots.find({ ...ownedHere(), [TAGS.snapshot]: "true" })
  return [...reaped, ...yield* removeOrphans(provider, "snapshot", taken, (found) => snapshots.remove(found.id))]
})

/**
 * Reap once `firstStart` ends (the layer's first sandbox started or failed, or `every` passed
 * first), then every `every` (default: the driver's reaper's, else 60 s), in the current scope
 * (failures are logged, never fatal). A driver with a reaper of its own runs that pass instead.
 * Not at once, beside the start: a pass lists every sandbox (and, on Docker, every image) of the
 * provider, work the start then waits behind on a small host (a local engine's ~1,300 images took
 * ~130 ms a listing, twice a pass, during the container's `start`); an orphan waits a start longer.
 */
export const startReaper = <S>(
  provider: string,
  driver: Driver<S>,
  every: Duration.Input | undefined,
  firstStart: Effect.Effect<void>
) => {
  const spacing = every ?? driver.reaper?.every ?? "60 seconds"
  return Effect.timeoutOption(firstStart, spacing).pipe(
    Effect.andThen(
      (driver.reaper?.pass ?? reapOrphans(provider, driver)).pipe(
        Effect.catch((error) => Effect.logWarning(`${provider} reaper: ${error.message}`)),
        Effect.repeat(Schedule.spaced(spacing))
      )
    ),
    Effect.forkScoped,
    Effect.asVoid
  )
}
