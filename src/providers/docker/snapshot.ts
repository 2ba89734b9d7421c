/**
 * Docker's snapshots (services/Driver.ts `SnapshotVerbs`): an image committed from the sandbox's
 * container, with its workspace inside. `docker commit` keeps the container's own filesystem but
 * none of its mounts, and the workspace is one (a host directory bound at /workspace), so the
 * workspace is copied into the image too: the container is frozen, committed, and its workspace
 * (read through the engine's archive API, which sees the mount) written into a never-started
 * container of that commit, which is committed again as the snapshot; the container is thawed. A
 * sandbox started from it gets a fresh workspace filled from the image before its server starts
 * (`restoreWorkspace`). Files only: the engine here has no checkpoint support (docs/snapshots.md).
 *
 * The image carries the owner tags as labels (our container labels blanked, so no session key
 * leaks into it) and, unless kept, the owner's lease, recorded in the lease directory as a
 * container is (leaseRecords.ts): the reaper removes it once the lease is stale (reaper.ts).
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { pauseContainer, removeContainer } from "../../engines/docker/container.ts"
import { IMAGE_WORKSPACE } from "../../engines/docker/containerSpec.ts"
import { engineCall } from "../../engines/docker/engine.ts"
import { LABEL, ourLabels } from "../../engines/docker/labels.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import type { ProviderError } from "../../schema/errors.ts"
import type { FoundSnapshot, SnapshotVerbs } from "../../services/Driver.ts"
import { recordContainer } from "./leaseRecords.ts"

/** What a snapshot needs of the driver's handle of a sandbox (driver.ts `DockerBox`). */
interface Snapshotted {
  readonly container: Docker.Container
  readonly name: string
}

/** Dockerfile `LABEL` instructions setting exactly these labels (`commit`'s `changes`). */
const labelChanges = (labels: Readonly<Record<string, string>>) =>
  Object.entries(labels).map(([key, value]) => `LABEL ${JSON.stringify(key)}=${JSON.stringify(value)}`)

/**
 * A container made of `image` only to read or write its files: never started, no network, none of
 * our labels (it is no sandbox).
 */
const scratchContainer = (docker: Docker, image: string) =>
  Effect.acquireRelease(
    engineCall(
      `create a container of ${image}`,
      () => docker.createContainer({ Image: image, Labels: ourLabels({}), NetworkDisabled: true, Cmd: ["true"] })
    ),
    removeContainer
  )

/** Copy `path` of one container into the same path of another, through the engine (the tar keeps owners and modes). */
const copyBetween = (from: Docker.Container, to: Docker.Container, path: string) =>
  Effect.gen(function*() {
    const archive = yield* engineCall(`read ${path}`, () => from.getArchive({ path }))
    yield* engineCall(
      `write ${path}`,
      () => to.putArchive(archive, { path: path.replace(/[^/]+\/?$/, "") || "/" })
    )
  })

/** The container frozen while `use` runs (unless it already was), so that its files and workspace are of one moment. */
const frozen = <A, E, R>(box: Snapshotted, use: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const info = yield* engineCall(`inspect ${box.name}`, () => box.container.inspect())
    if (info.State.Paused || !info.State.Running) return yield* use
    return yield* Effect.acquireUseRelease(
      pauseContainer(box.container, box.name),
      () => use,
      () => Effect.ignore(engineCall(`unpause ${box.name}`, () => box.container.unpause()))
    )
  })

/** An image as a found snapshot. */
const foundImage = (id: string, labels: Readonly<Record<string, string>>, created: number): FoundSnapshot => ({
  id,
  tags: Object.fromEntries(Object.entries(labels).filter(([, value]) => value !== "")),
  createdAt: new Date(created * 1000)
})

/**
 * Docker's snapshot verbs: images named `<prefix>-snapshot:<id>`, leased to `leaseDir` (the
 * layer's owner lease) unless kept.
 */
export const dockerSnapshots = (docker: Docker, prefix: string, leaseDir: string): SnapshotVerbs<Snapshotted> => ({
  keeps: "files",
  take: Effect.fn("DockerRuntime.snapshot")(function*(box: Snapshotted, tags: Readonly<Record<string, string>>) {
    const repository = `${prefix}-snapshot`.toLowerCase()
    const tag = randomBytes(8).toString("hex")
    const name = `${repository}:${tag}`
    const lease = tags[TAGS.keepAlive] === "true" ? undefined : leaseDir
    // The reaper acts only on what the lease records: recorded before the image exists.
    if (lease !== undefined) yield* recordContainer(lease, name, undefined).pipe(Effect.orDie)
    const createdAt = new Date()
    const labels = {
      ...ourLabels({}),
      ...tags,
      [LABEL.ownerLease]: lease ?? "",
      [LABEL.createdAt]: createdAt.toISOString()
    }
    yield* Effect.scoped(frozen(
      box,
      Effect.gen(function*() {
        // Not yet marked a snapshot: a reaper removing unused untagged snapshots must not take it meanwhile.
        const files = yield* engineCall(
          `commit ${box.name}`,
          () => box.container.commit({ pause: false, changes: labelChanges(ourLabels({})) })
        )
        const scratch = yield* scratchContainer(docker, files.Id as string)
        // The parent commit stays only as the snapshot's lower layer: it goes with it.
        const untagged = () =>
          Effect.ignore(engineCall("remove a partial snapshot", () => docker.getImage(files.Id).remove()))
        yield* copyBetween(box.container, scratch, IMAGE_WORKSPACE).pipe(
          Effect.andThen(
            engineCall(
              `commit the snapshot ${name}`,
              () => scratch.commit({ repo: repository, tag, changes: labelChanges(labels) })
            )
          ),
          Effect.onError(untagged)
        )
      })
    ))
    return foundImage(name, labels, Math.floor(createdAt.getTime() / 1000))
  }),
  remove: (id) =>
    // Forced: a snapshot that running sandboxes started from is untagged now and removed by the
    // reaper once none uses it (reaper.ts).
    engineCall(`remove the snapshot ${id}`, () => docker.getImage(id).remove({ force: true })).pipe(
      Effect.catchIf((error) => error.reason === "not-found", () => Effect.void),
      Effect.asVoid
    ),
  find: Effect.fn("DockerRuntime.findSnapshots")(function*(tags: Readonly<Record<string, string>>) {
    const images = yield* engineCall(
      "list snapshots",
      () =>
        docker.listImages({
          filters: { label: Object.entries({ ...tags, [LABEL.snapshot]: "true" }).map(([k, v]) => `${k}=${v}`) }
        })
    )
    return images.flatMap((image) =>
      (image.RepoTags ?? []).filter((name) => name !== "<none>:<none>").map((name) =>
        foundImage(name, image.Labels ?? {}, image.Created)
      )
    )
  })
})

/**
 * Fill a created (not yet started) sandbox's workspace from the snapshot image it was made of: the
 * workspace is a fresh host directory mounted over the image's copy, which the engine's archive
 * API writes through.
 */
export const restoreWorkspace = (
  docker: Docker,
  image: string,
  container: Docker.Container
): Effect.Effect<void, ProviderError> =>
  Effect.scoped(
    Effect.flatMap(scratchContainer(docker, image), (scratch) => copyBetween(scratch, container, IMAGE_WORKSPACE))
  )
