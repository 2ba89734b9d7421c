/**
 * A snapshot name for the providers whose snapshots carry their owner tags in the name (Daytona,
 * E2B: src/hosted/snapshotNames.ts), of an owner on this host that is gone: what the reaper removes.
 */
import { spawnSync } from "node:child_process"
import { snapshotTags, TAGS } from "../../src/hosted/ownerTags.ts"
import { snapshotName } from "../../src/hosted/snapshotNames.ts"

/** The name, its owner's pid one no process has (a child's that has exited). */
export const orphanSnapshotName = (): string =>
  snapshotName({
    ...snapshotTags({ sessionId: "dead-owner", keep: false }),
    [TAGS.ownerPid]: String(spawnSync("true").pid)
  }, new Date())
