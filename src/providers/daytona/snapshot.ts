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
 * Daytona's snapshots carry no labels: the owner tags travel in the name (`snapshotName`).
 */
import type { Daytona, Sandbox, Snapshot } from "@daytonaio/sdk"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { TAGS } from "../../hosted/ownerTags.ts"
import { ProviderError, type ProviderReason } from "../../schema/errors.ts"
import type { FoundSnapshot, ProviderCall, SnapshotVerbs } from "../../services/Driver.ts"

const PREFIX = "effect-sandbox-snapshot-"

/** The tags a name carries, in this order; `managed` and `snapshot` are the prefix itself. */
const CARRIED = [TAGS.session, TAGS.ownerHost, TAGS.ownerPid, TAGS.keepAlive] as const

/**
 * A snapshot's name carrying its tags: the prefix, 8 random hex digits (a name is unique in the
 * organisation, and one session may take many), then the carried tags' JSON in hex: lowercase
 * letters and digits only, whatever the session id or host name holds (Daytona checks a name as a
 * safe display string and makes an image reference of it).
 */
export const snapshotName = (tags: Readonly<Record<string, string>>): string =>
  `${PREFIX}${randomBytes(4).toString("hex")}-${
    Buffer.from(JSON.stringify(CARRIED.map((tag) => tags[tag] ?? ""))).toString("hex")
  }`

/** The tags a name carries; undefined for a snapshot named otherwise (not ours). */
export const tagsOfName = (name: string): Record<string, string> | undefined => {
  const match = /^effect-sandbox-snapshot-[0-9a-f]{8}-((?:[0-9a-f]{2})+)$/.exec(name)
  if (match === null) return undefined
  try {
    const values: unknown = JSON.parse(Buffer.from(match[1]!, "hex").toString("utf8"))
    if (!Array.isArray(values) || values.length !== CARRIED.length) return undefined
    if (!values.every((value) => typeof value === "string")) return undefined
    return {
      [TAGS.managed]: "true",
      [TAGS.snapshot]: "true",
      ...Object.fromEntries(CARRIED.map((tag, i) => [tag, values[i] as string]))
    }
  } catch {
    return undefined
  }
}

/** One of our snapshots as found; undefined for another's, or one Daytona is removing. */
const foundSnapshot = (snapshot: Snapshot): FoundSnapshot | undefined => {
  const tags = snapshot.state === "removing" ? undefined : tagsOfName(snapshot.name)
  return tags === undefined ? undefined : { id: snapshot.name, tags, createdAt: new Date(snapshot.createdAt) }
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
    const name = snapshotName(tags)
    const operation = `snapshot sandbox ${sandbox.id}`
    const none = (reason: ProviderReason, status: number | undefined, why: string) =>
      new ProviderError({
        provider: "Daytona",
        operation,
        reason,
        ...(status === undefined ? {} : { status }),
        message: `Daytona made no snapshot ${name} of sandbox ${sandbox.id}: ${why}`
      })
    return call(operation, () => sandbox.createSnapshot(name, deadline)).pipe(
      Effect.andThen(call(`look up snapshot ${name}`, () => client.snapshot.get(name))),
      Effect.mapError((error) =>
        missing(error)
          ? none(error.reason, error.status, "the sandbox left snapshotting without one (the runner's commit failed)")
          : error
      ),
      Effect.flatMap((snapshot) =>
        // The name taken meanwhile: the runner's commit was dropped, and the name is another's.
        snapshot.sourceSandboxId !== null && snapshot.sourceSandboxId !== sandbox.id
          ? Effect.fail(none("conflict", 409, `the name is a snapshot of sandbox ${snapshot.sourceSandboxId}`))
          : Effect.succeed({ id: name, tags: { ...tags }, createdAt: new Date(snapshot.createdAt) })
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
          return found !== undefined && Object.entries(tags).every(([k, v]) => found.tags[k] === v) ? [found] : []
        })
      )
    )
})
