/**
 * Removing a container with its temporary host workspace: the one `rm -rf` the Docker runtime runs on
 * the host, as the owner (root in CI), often after the owner died. The path comes from a label
 * the runtime wrote, checked against the owner's record where there is one (reaper.ts), yet a
 * label only says where to look: a directory is removed only when it is one the runtimes make by
 * where it lies, inside the temp dir under an `effect-sandbox-` entry (workspace.ts makes them
 * there), and by what it is, a real directory reached through no link, so that a link planted in
 * its place or above it cannot send the removal elsewhere. Anything else is logged and left.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { lstatSync, realpathSync, rmSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { isAbsolute, normalize, relative, sep } from "node:path"
import { removeContainer } from "../../engines/docker/container.ts"
import { LABEL, labelOf, type Labels } from "../../engines/docker/labels.ts"
import { claimOf } from "./leaseRecords.ts"

/** What the temp dir's entries that hold runtime workspaces are called (directly, or under a parent so named). */
export const TEMP_ENTRY_PREFIX = "effect-sandbox-"

type Verdict =
  | { readonly _tag: "Remove" }
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Refuse"; readonly reason: string }

const refuse = (reason: string): Verdict => ({ _tag: "Refuse", reason })

/** Whether `path` may be removed as a temporary workspace of ours, is gone already, or is not ours. */
export const workspaceVerdict = (path: string): Verdict => {
  if (!isAbsolute(path) || normalize(path) !== path || path.endsWith(sep)) return refuse("not a normal absolute path")
  const inside = relative(realpathSync(tmpdir()), path)
  if (isAbsolute(inside) || !inside.startsWith(TEMP_ENTRY_PREFIX)) {
    return refuse(`not under ${tmpdir()}${sep}${TEMP_ENTRY_PREFIX}*`)
  }
  let stat
  try {
    stat = lstatSync(path)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { _tag: "Gone" } : refuse(String(error))
  }
  if (!stat.isDirectory()) return refuse("not a directory (a link, or a file)")
  if (realpathSync(path) !== path) return refuse("reached through a link")
  return { _tag: "Remove" }
}

/** Remove a temporary workspace when `workspaceVerdict` allows it; say why not otherwise, and go on. */
export const removeTemporaryWorkspace = Effect.fn("removeTemporaryWorkspace")(function*(path: string) {
  const verdict = yield* Effect.try(() => workspaceVerdict(path)).pipe(
    Effect.catch((e) => Effect.succeed(refuse(String(e.cause))))
  )
  if (verdict._tag === "Gone") return
  if (verdict._tag === "Refuse") return yield* Effect.logWarning(`not removing ${path}: ${verdict.reason}`)
  // Files the sandbox user made may not be ours to remove: say so, and go on.
  yield* Effect.try(() => rmSync(path, { recursive: true, force: true })).pipe(
    Effect.catch((e) => Effect.logWarning(`cannot remove the workspace ${path}: ${e.cause}`))
  )
})

/**
 * The temporary workspace the container `name`'s labels name, when it is ours to remove with the
 * container: one its owner recorded in a lease directory of our own user (leaseRecords.ts), or,
 * for a kept-alive container, which has no lease, one made on this host.
 */
export const temporaryWorkspaceOf = (name: string, labels: Labels): string | undefined =>
  labelOf(labels, LABEL.ownerLease) !== undefined
    ? claimOf(name, labels)?.workspace
    : labelOf(labels, LABEL.ownerHost) === hostname()
    ? labelOf(labels, LABEL.temporaryWorkspace)
    : undefined

/**
 * Remove a container created earlier (by this or a dead process) and then its temporary
 * workspace, if it has one and the removal's checks let it (workspaceRemoval.ts).
 */
export const removeWithWorkspace = (container: Docker.Container, workspace: string | undefined) =>
  removeContainer(container).pipe(
    Effect.andThen(workspace === undefined ? Effect.void : removeTemporaryWorkspace(workspace))
  )
