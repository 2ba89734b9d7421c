/**
 * The reaper: removes containers whose owner is provably gone, that is whose
 * lease (ownerLease.ts) it can read and which was not renewed within its terms.
 * A container whose lease it cannot read (no lease label, a lease on another
 * filesystem or host) is never touched: no guessing from pids, which mean
 * nothing across PID namespaces. Kept-alive containers carry no lease.
 *
 * Labels only point: a container is reaped, and the temporary workspace its label
 * names removed, only when a lease directory of our own user records exactly that
 * container and that workspace (leaseRecords.ts). A container an image labelled, or
 * one another program started with our labels, is left alone, and so is its path.
 *
 * An orphan does not wait for the reaper: its server stops itself once the lease
 * goes stale. What the reaper adds is removing the stopped container and its
 * temporary host workspace, and the stale lease directories left behind. It runs
 * when a DockerRuntime starts and then every `reapEvery` (30 s) while it lives.
 *
 * Snapshot images (snapshot.ts) are judged the same way: the owner's lease their label names must
 * record them and be stale. A kept snapshot names no lease and is left. Listing images is the
 * costly part of a pass (the engine reads and checks every image's config, ~100 ms of its CPU on an
 * engine holding ~90 images, where listing containers takes ~1 ms), so a runtime's own passes look
 * at images only now and then (`IMAGE_PASS_EVERY`), and the stale lease directories, which a
 * snapshot may still name, are swept only on those passes.
 */
import type Docker from "dockerode"
import { Duration, Effect } from "effect"
import { readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dockerClient } from "../../engines/docker/client.ts"
import { reapStrayGateways, removeEgress } from "../../engines/docker/egress.ts"
import { LABEL, labelOf } from "../../engines/docker/labels.ts"
import { isStale, type Lease, LEASE_FILE, readLease } from "../../server/leaseFile.ts"
import { LEASE_DIR_PREFIX } from "./leaseDir.ts"
import { type Claim, claimOf, isOwnLeaseDir } from "./leaseRecords.ts"
import { removeWithWorkspace } from "./workspaceRemoval.ts"

/** The lease of a container's owner, when its claim holds and this process can read the lease. */
const leaseOf = (claim: Claim | null) => claim === null ? null : readLease(join(claim.dir, LEASE_FILE))

interface Suspect {
  readonly lease: Lease
}

/** Our own user's lease directories in our temp dir whose lease reads as stale now. */
const staleLeaseDirs = (): ReadonlyArray<Suspect & { readonly dir: string }> => {
  try {
    return readdirSync(tmpdir()).filter((e) => e.startsWith(LEASE_DIR_PREFIX)).flatMap((entry) => {
      const dir = join(tmpdir(), entry)
      const lease = isOwnLeaseDir(dir) ? readLease(join(dir, LEASE_FILE)) : null
      return lease !== null && isStale(lease) ? [{ dir, lease }] : []
    })
  } catch {
    return []
  }
}

/** Still unrenewed since it was suspected, and still stale: the owner is gone. */
const confirmed = (suspect: Suspect, now: Lease | null) =>
  now !== null && now.renewedAt === suspect.lease.renewedAt && isStale(now)

/**
 * Remove the suspected lease directories that stayed unrenewed (confirmed as containers are:
 * a live owner that was only slow has renewed meanwhile) and that no remaining container names.
 */
const sweepLeases = (suspects: ReadonlyArray<Suspect & { readonly dir: string }>, named: ReadonlySet<string>) =>
  Effect.sync(() => {
    for (const suspect of suspects) {
      if (!named.has(suspect.dir) && confirmed(suspect, readLease(join(suspect.dir, LEASE_FILE)))) {
        rmSync(suspect.dir, { recursive: true, force: true })
      }
    }
  }).pipe(Effect.catchDefect((e) => Effect.logWarning(`cannot sweep stale leases: ${e}`)))

/**
 * Snapshot images (snapshot.ts) by name, with their labels; untagged ones (removed while sandboxes
 * started from them still ran) apart: no container uses them any more once they can be removed.
 */
const listSnapshots = (docker: Docker, dangling: boolean) =>
  Effect.promise(() =>
    docker.listImages({ filters: { label: [`${LABEL.snapshot}=true`], dangling: [String(dangling)] } }).catch(() => [])
  )

/** Remove the untagged snapshot images no container uses (the engine refuses the others: left for a later pass). */
const removeUnusedSnapshots = (docker: Docker) =>
  Effect.flatMap(listSnapshots(docker, true), (images) =>
    Effect.forEach(
      images,
      (image) => Effect.promise(() => docker.getImage(image.Id).remove().catch(() => undefined)),
      { discard: true }
    ))

/**
 * Remove every container (and, with `images`, snapshot image) on the engine whose owner's lease is
 * stale; returns how many containers were removed. Without `images` the pass neither lists images
 * nor sweeps lease directories: a stale lease a snapshot still names must stay for the pass that
 * judges that snapshot.
 */
export const reapOrphans = Effect.fn("reapOrphans")(function*(scope: { readonly images: boolean } = { images: true }) {
  const docker = yield* dockerClient
  const list = Effect.promise(() =>
    docker.listContainers({ all: true, filters: { label: [`${LABEL.managed}=true`] } }).catch(() => [])
  )
  const suspects = (yield* list).flatMap((c) => {
    const claim = claimOf(c.Names[0]?.replace(/^\//, "") ?? "", c.Labels)
    const lease = leaseOf(claim)
    return claim !== null && lease !== null && isStale(lease) ? [{ container: c, claim, lease }] : []
  })
  const images = scope.images ? yield* listSnapshots(docker, false) : []
  const snapshots = images.flatMap((image) =>
    (image.RepoTags ?? []).flatMap((name) => {
      const claim = claimOf(name, image.Labels ?? {})
      const lease = leaseOf(claim)
      return claim !== null && lease !== null && isStale(lease) ? [{ name, claim, lease }] : []
    })
  )
  const staleDirs = scope.images ? staleLeaseDirs() : []
  const all: ReadonlyArray<Suspect> = [...suspects, ...snapshots, ...staleDirs]
  if (all.length > 0) {
    // Confirm over two renewals: just after a suspend and resume, live owners need a moment to renew.
    const confirm = Math.max(...all.map(({ lease }) => Math.min(2 * lease.renewEveryMs, lease.staleAfterMs)))
    yield* Effect.sleep(Duration.millis(confirm))
  }
  const orphans = suspects.filter((suspect) => confirmed(suspect, leaseOf(suspect.claim)))
  yield* Effect.forEach(
    orphans,
    ({ claim, container: c }) =>
      removeWithWorkspace(docker.getContainer(c.Id), claim.workspace).pipe(
        Effect.andThen(removeEgress(c.Names[0]?.replace(/^\//, "") ?? "")),
        Effect.tap(() => Effect.logInfo(`reaped container ${c.Names[0] ?? c.Id}: its owner's lease is stale`))
      ),
    { concurrency: 4, discard: true }
  )
  yield* reapStrayGateways()
  if (!scope.images) return orphans.length
  const reaped = snapshots.filter((suspect) => confirmed(suspect, leaseOf(suspect.claim)))
  yield* Effect.forEach(
    reaped,
    ({ name }) =>
      Effect.promise(() => docker.getImage(name).remove({ force: true }).catch(() => undefined)).pipe(
        Effect.tap(() => Effect.logInfo(`reaped snapshot ${name}: its owner's lease is stale`))
      ),
    { discard: true }
  )
  yield* removeUnusedSnapshots(docker)
  // The images listed above, less those just reaped: one that appeared since belongs to a live
  // owner, whose lease is not stale and so not among those to sweep.
  const gone = new Set(reaped.map(({ name }) => name))
  const named = new Set([
    ...(yield* list).flatMap((c) => labelOf(c.Labels, LABEL.ownerLease) ?? []),
    ...images.filter((image) => !(image.RepoTags ?? []).every((name) => gone.has(name))).flatMap((image) =>
      labelOf(image.Labels, LABEL.ownerLease) ?? []
    )
  ])
  yield* sweepLeases(staleDirs, named)
  return orphans.length
})

/** The engines (by address) a pass of this process runs on now. */
const passing = new Set<string>()
/** How many passes of this process have begun on each engine. */
const begun = new Map<string, number>()
/** When the last pass of this process on each engine that looked at images began, by Effect's clock. */
const lastImagesBegun = new Map<string, number>()

/**
 * How far apart a process's passes over one engine look at images. A dead owner's snapshot holds
 * disk, not CPU or memory, and the lease watchdog of a crashed owner (leaseWatchdogMain.ts) runs a
 * whole pass at once; while a start's pass looked at images every time, their listing was about a
 * sixth of the engine's CPU for a start and stop (`docs/design-notes.md`, "Fifth round").
 */
export const IMAGE_PASS_EVERY = Duration.minutes(5)

/**
 * The reaper pass of one layer (made once per layer): skipped while a pass of this process runs on
 * the same engine, and when another layer's began since this layer's previous turn (or since the
 * layer was made), since that pass saw everything this one would. The runtimes of a process on one
 * engine (a pool, 20 layers started at once) then make about one pass a spacing between them:
 * a pass lists every container of the engine, and the first passes of 20 layers, each made once its
 * own sandbox started (the hosted reaper), would otherwise run one after another while the others'
 * containers start. A pass looks at images too when none of this process's passes on the engine
 * has for `IMAGE_PASS_EVERY` (the first always does). `pass` is `reapOrphans` (a test gives its own).
 */
export const reapUnlessCovered = <R>(
  address: string,
  pass: (scope: { readonly images: boolean }) => Effect.Effect<unknown, never, R>
) =>
  Effect.sync(() => {
    // The count of passes begun that this layer has seen: at its making, then at each of its turns.
    let seen = begun.get(address) ?? 0
    return Effect.clockWith((clock) =>
      Effect.suspend(() => {
        const count = begun.get(address) ?? 0
        const covered = passing.has(address) || count > seen
        seen = covered ? count : count + 1
        if (covered) return Effect.void
        begun.set(address, count + 1)
        const now = clock.currentTimeMillisUnsafe()
        const images = now - (lastImagesBegun.get(address) ?? Number.NEGATIVE_INFINITY) >=
          Duration.toMillis(IMAGE_PASS_EVERY)
        if (images) lastImagesBegun.set(address, now)
        return Effect.acquireUseRelease(
          Effect.sync(() => passing.add(address)),
          () => pass({ images }),
          () => Effect.sync(() => passing.delete(address))
        ).pipe(Effect.asVoid)
      })
    )
  })
