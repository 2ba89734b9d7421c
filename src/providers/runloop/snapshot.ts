/**
 * Runloop's snapshots (services/Driver.ts `SnapshotVerbs`): disk snapshots (`snapshotDisk`), taken
 * with our metadata, listed with `listDiskSnapshots`, deleted with `diskSnapshots.delete`; a devbox
 * starts from one with `snapshot_id` (driver.ts). Runloop keeps the disk and not the memory ("will
 * not snapshot memory state such as running processes", as its suspend), so a devbox started from
 * one launches the server again; a snapshot lives until it is deleted.
 */
import type { Runloop } from "@runloop/api-client"
import { Effect } from "effect"
import type { ProviderCall, SnapshotVerbs } from "../../services/Driver.ts"

/** A Runloop snapshot view as a found snapshot. */
const foundSnapshot = (view: Runloop.DevboxSnapshotView) => ({
  id: view.id,
  tags: view.metadata,
  createdAt: new Date(view.create_time_ms)
})

/**
 * The verbs over the SDK's devboxes: `call` bounded as every request, `longCall` as long as a
 * snapshot may take (Runloop answers once the disk is copied).
 */
export const runloopSnapshots = (
  devboxes: Runloop["devboxes"],
  call: ProviderCall,
  longCall: ProviderCall
): SnapshotVerbs<{ readonly id: string }> => ({
  keeps: "files",
  take: (box, tags) =>
    longCall(
      `snapshot the disk of devbox ${box.id}`,
      () => devboxes.snapshotDisk(box.id, { name: `effect-sandbox-${box.id}`, metadata: { ...tags } })
    ).pipe(Effect.map(foundSnapshot)),
  remove: (id) =>
    call(`delete disk snapshot ${id}`, () => devboxes.diskSnapshots.delete(id)).pipe(
      Effect.asVoid,
      Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)
    ),
  find: (tags) =>
    call("list disk snapshots", async () => {
      const listed: Array<Runloop.DevboxSnapshotView> = []
      for await (const view of devboxes.listDiskSnapshots({ limit: 100 })) {
        if (Object.entries(tags).every(([k, v]) => view.metadata[k] === v)) listed.push(view)
      }
      return listed
    }).pipe(Effect.map((listed) => listed.map(foundSnapshot)))
})
