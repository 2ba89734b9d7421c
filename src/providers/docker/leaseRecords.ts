/**
 * The owner's records of its containers, in its lease directory (ownerLease.ts). A container's
 * labels say which lease and temporary workspace it claims, and labels are anyone's to write:
 * an image's reach its containers, and whoever holds the engine socket can start a container
 * with ours. Only the owner writes its lease directory (the containers see it read-only), and
 * before each create it records there the container and the temporary workspace it made for it;
 * a reaper acts on a claim (`claimOf`) only when it finds that record, in a lease directory of its
 * own user.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { lstatSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { LABEL, labelOf, type Labels } from "../../engines/docker/labels.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { LEASE_DIR_PREFIX } from "./leaseDir.ts"

/**
 * A lease directory this process may act on: one of ours by name and place (`<tmpdir>/effect-sandbox-lease-*`,
 * a real directory, not a link) and owned by our own user, so that a reaper running as root never
 * acts on a directory another user made (nor on one a sandbox planted in its workspace).
 */
export const isOwnLeaseDir = (dir: string): boolean => {
  if (dirname(dir) !== tmpdir() || !basename(dir).startsWith(LEASE_DIR_PREFIX)) return false
  try {
    const stat = lstatSync(dir)
    return stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid())
  } catch {
    return false
  }
}

/**
 * The record's file name: a digest of the container's name and its temporary workspace (empty
 * for none), so that the containers, which see the directory, learn neither from it.
 */
const recordFile = (dir: string, container: string, workspace: string | undefined) =>
  join(dir, `container-${createHash("sha256").update(`${container}\0${workspace ?? ""}`).digest("hex")}`)

/** Record, before creating it, a container made under the lease in `dir` and its temporary workspace. */
export const recordContainer = (dir: string, container: string, workspace: string | undefined) =>
  Effect.try({
    try: () => writeFileSync(recordFile(dir, container, workspace), "", { mode: 0o644 }),
    catch: (error) =>
      new RuntimeStartError({ message: `Cannot record ${container} in the owner's lease ${dir}: ${String(error)}` })
  })

/** The owner recorded this container under the lease in `dir`, with exactly this temporary workspace. */
const isRecorded = (dir: string, container: string, workspace: string | undefined): boolean => {
  try {
    return lstatSync(recordFile(dir, container, workspace)).isFile()
  } catch {
    return false
  }
}

/** What the owner of a container recorded of it: its lease directory and its temporary workspace. */
export interface Claim {
  readonly dir: string
  readonly workspace: string | undefined
}

/**
 * The claim of the container `name` (its labels: the lease and the temporary workspace they name),
 * when it is one to act on: a lease directory of our own user that records exactly that container
 * and that workspace. Null for kept-alive containers, which have no lease.
 */
export const claimOf = (name: string, labels: Labels): Claim | null => {
  const dir = labelOf(labels, LABEL.ownerLease)
  if (dir === undefined || labelOf(labels, LABEL.keepAlive) === "true") return null
  const workspace = labelOf(labels, LABEL.temporaryWorkspace)
  return isOwnLeaseDir(dir) && isRecorded(dir, name, workspace) ? { dir, workspace } : null
}
