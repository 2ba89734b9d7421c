/**
 * Daytona's snapshots (services/Driver.ts `SnapshotVerbs`): `sandbox.createSnapshot(name)`, which
 * commits the sandbox's filesystem into a snapshot of the organisation, listed with `snapshot.list`,
 * deleted with `snapshot.delete`; a sandbox starts from one by its name (driver.ts `create`). What
 * survives is the files: Daytona keeps memory only for Windows sandboxes (`includeMemory`, refused
 * otherwise with 400 "includeMemory is only supported for Windows sandboxes"). Daytona snapshots a
 * sandbox only when it is started or stopped, and answers before the commit is done; the SDK waits
 * until the sandbox leaves `snapshotting`. A commit that failed at the runner (a name taken meanwhile)
 * leaves no snapshot and no error, so the snapshot is looked up by name afterwards, and must be of
 * this sandbox (`sourceSandboxId`, where Daytona says it).
 *
 * Daytona's snapshots carry no labels: the owner tags travel in the name (hosted/snapshotNames.ts).
 */
import type { Daytona, Sandbox, Snapshot } from "@daytonaio/sdk"
import { Effect } from "effect"
import { hasTags, parseSnapshotName, snapshotName } from "../../hosted/snapshotNames.ts"
import { ProviderError, type ProviderReason } from "../../schema/errors.ts"
import type { FoundSnapshot, ProviderCall, SnapshotVerbs } from "../../services/Driver.ts"

/** One of our snapshots as found; undefined for another's, or one Daytona is removing. */
const foundSnapshot = (snapshot: Snapshot): FoundSnapshot | undefined => {
  const named = snapshot.state === "removing" ? undefined : parseSnapshotName(snapshot.name)
  return named === undefined ? undefined : { id: snapshot.name, tags: named.tags, createdAt: named.takenAt }
}

/** A snapshot Daytona does not have: its 404 "Snapshot X not found" (classify.ts reads it as image-missing). */
const missing = (error: ProviderError) => error.reason === "image-missing" || error.reason === "not-found"

/** The verbs over the SDK's client; `deadline`: how long the SDK may wait for the sandbox to leave `snapshotting` (s). */
export const daytonaSnapshots = (
  client: Daytona,
  call: ProviderCall,
  deadline: number
): SnapshotVerbs<Sandbox> => ({
  keeps: "files",
  take: (sandbox, tags) => {
    const takenAt = new Date()
    const name = snapshotName(tags, takenAt)
    const operation = `snapshot sandbox ${sandbox.id}`
    const none = (reason: ProviderReason, status: number | undefined, why: string) =>
      new ProviderError({
        provider: "Daytona",
        operation,
        reason,
        ...(status === undefined ? {} : { status }),
        message: `Daytona made no snapshot ${name} of sandbox ${sandbox.id}: ${why}`
      })
    const lookUp = call(`look up snapshot ${name}`, () => client.snapshot.get(name)).pipe(
      Effect.mapError((error) =>
        missing(error)
          ? none(error.reason, error.status, "the sandbox left snapshotting without one (the runner's commit failed)")
          : error
      )
    )
    return call(operation, () => sandbox.createSnapshot(name, deadline)).pipe(
      Effect.andThen(lookUp),
      Effect.flatMap((snapshot) =>
        // The name taken meanwhile: the runner's commit was dropped, and the name is another's.
        snapshot.sourceSandboxId !== null && snapshot.sourceSandboxId !== sandbox.id
          ? Effect.fail(none("conflict", 409, `the name is a snapshot of sandbox ${snapshot.sourceSandboxId}`))
          : Effect.succeed({ id: name, tags: { ...tags }, createdAt: takenAt })
      )
    )
  },
  remove: (name) =>
    call(`delete snapshot ${name}`, () => client.snapshot.delete(name)).pipe(
      Effect.catchIf(missing, () => Effect.void)
    ),
  find: (tags) =>
    call("list snapshots", async () => {
      const listed: Array<Snapshot> = []
      for (let page = 1;; page++) {
        const answer = await client.snapshot.list({ page, limit: 100 })
        listed.push(...answer.items)
        if (page >= answer.totalPages) return listed
      }
    }).pipe(
      Effect.map((listed) =>
        listed.flatMap((snapshot) => {
          const found = foundSnapshot(snapshot)
          return found !== undefined && hasTags(found.tags, tags) ? [found] : []
        })
      )
    )
})
