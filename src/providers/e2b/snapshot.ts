/**
 * E2B's snapshots (services/Driver.ts `SnapshotVerbs`): `Sandbox.createSnapshot`, a template E2B
 * makes of the running sandbox (briefly paused meanwhile), listed with `Sandbox.listSnapshots`,
 * deleted with `Sandbox.deleteSnapshot`; a sandbox starts from one as from a template (driver.ts
 * `create`). E2B's snapshots carry no metadata: the owner tags travel in the name
 * (hosted/snapshotNames.ts), which E2B gives back namespaced and tagged (`team/<name>:default`).
 *
 * An E2B snapshot keeps memory: a sandbox made from one comes back running the source's processes,
 * our action server among them, holding the SOURCE's session key. A copy must answer only to its
 * own key, so it forgets that memory before its server starts (`forgetMemory`): paused keeping no
 * memory, then connected again, which cold-boots it from its disk. Every process of the source is
 * gone then (the source's server, its shell, anything left running), so what a copy keeps is the
 * files, and its server is launched anew with its own key. docs/snapshots.md says why.
 */
import type { Sandbox } from "e2b"
import { Effect } from "effect"
import { hasTags, parseSnapshotName, snapshotName } from "../../hosted/snapshotNames.ts"
import type { FoundSnapshot, ProviderCall, SnapshotVerbs } from "../../services/Driver.ts"

/** The SDK's options every call takes (the key, the API's URL, ...). */
type SdkOptions = Parameters<typeof Sandbox.listSnapshots>[0]

/** A listed snapshot as found, by the first of its names that is ours; undefined for another's. */
const foundSnapshot = (snapshotId: string, names: ReadonlyArray<string>): FoundSnapshot | undefined => {
  for (const full of names) {
    // `team-slug/name:tag`: the name alone.
    const named = parseSnapshotName(full.replace(/^.*\//, "").replace(/:[^:]*$/, ""))
    if (named !== undefined) return { id: snapshotId, tags: named.tags, createdAt: named.takenAt }
  }
  return undefined
}

/** The verbs over the SDK's `Sandbox` class, with the layer's SDK options. */
export const e2bSnapshots = <S extends { readonly id: string }>(
  sdkClass: typeof Sandbox,
  sdk: SdkOptions,
  call: ProviderCall
): SnapshotVerbs<S> => ({
  keeps: "files",
  take: (box, tags) => {
    const takenAt = new Date()
    const name = snapshotName(tags, takenAt)
    return call(`snapshot sandbox ${box.id}`, () => sdkClass.createSnapshot(box.id, { ...sdk, name })).pipe(
      Effect.map((info) => ({ id: info.snapshotId, tags: { ...tags }, createdAt: takenAt }))
    )
  },
  // `false` when E2B has no such snapshot: gone already, no failure.
  remove: (id) => call(`delete snapshot ${id}`, () => sdkClass.deleteSnapshot(id, sdk)).pipe(Effect.asVoid),
  find: Effect.fn("E2BRuntime.findSnapshots")(function*(tags) {
    const paginator = sdkClass.listSnapshots(sdk)
    const found: Array<FoundSnapshot> = []
    while (paginator.hasNext) {
      for (const info of yield* call("list snapshots", () => paginator.nextItems())) {
        const one = foundSnapshot(info.snapshotId, info.names)
        if (one !== undefined && hasTags(one.tags, tags)) found.push(one)
      }
    }
    return found
  })
})

/**
 * A sandbox made from a snapshot, rebooted from its disk: paused keeping no memory (E2B's
 * filesystem-only pause), then connected again (a cold boot), so that nothing of the source's
 * memory (its server and session key above all) runs in it. The connected instance.
 */
export const forgetMemory = (
  sdkClass: typeof Sandbox,
  sdk: SdkOptions,
  call: ProviderCall,
  id: string,
  timeoutMs: number
) =>
  call(`reboot sandbox ${id} without the snapshot's memory`, async () => {
    await sdkClass.pause(id, { ...sdk, keepMemory: false })
    return sdkClass.connect(id, { ...sdk, timeoutMs })
  })
