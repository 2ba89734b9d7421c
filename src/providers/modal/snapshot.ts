/**
 * Modal's snapshots (services/Driver.ts `SnapshotVerbs`): `sandbox.snapshotFilesystem()`, an image
 * of the running sandbox's filesystem that the SDK asks of the task's command router; a sandbox
 * starts from it by its id (`images.fromId`), and `images.delete` removes it. Files only: nothing
 * of the call keeps processes (`keeps: "files"`), and a copy's server is launched anew as its
 * sandbox's command.
 *
 * A snapshot image carries no tags and the SDK lists no images, so each is published under a name
 * carrying the owner tags (snapshotRef.ts), found again with the control plane's `ImageListTags`
 * (a prefix search over `name:tag`, through the client's raw gRPC stub, as ended.ts reads results)
 * and removed with `ImageNameDelete`.
 *
 * Modal gives a snapshot image a lifetime counted from its taking (a hard cutoff, not extended by
 * use): a kept one gets none (it lives until removed, as on the other providers); one not kept gets
 * the sandbox's `lifetime`, so that an owner whose machine is gone, which no reaper of its host will
 * judge, leaves nothing for longer than its sandbox could have lived.
 */
import { Effect } from "effect"
import type { ModalClient, Sandbox } from "modal"
import { hostname } from "node:os"
import { TAGS } from "../../hosted/ownerTags.ts"
import { withReason } from "../../hosted/providerCall.ts"
import { hasTags } from "../../hosted/snapshotNames.ts"
import type { ProviderError } from "../../schema/errors.ts"
import type { FoundSnapshot, ProviderCall, SnapshotVerbs } from "../../services/Driver.ts"
import { hostPrefix, parseSnapshotRef, SNAPSHOT_PREFIX, snapshotRef } from "./snapshotRef.ts"

/** Modal's page size for `ImageListTags` (more is refused). */
const PAGE = 100

/** One published name: Modal's `ImageListTagsItem`. */
interface Published {
  readonly tag: string
  readonly imageId: string
  readonly createdAt: number
}

const gone = (error: ProviderError) => error.reason === "not-found"

/** The verbs over the SDK's client; `lifetimeMs`: how long a snapshot not kept lives (the sandbox's `lifetime`). */
export const modalSnapshots = (client: ModalClient, call: ProviderCall, lifetimeMs: number): SnapshotVerbs<Sandbox> => {
  const environmentName = client.environmentName()

  /** Our published names beginning with `prefix`, every page. */
  const published = (prefix: string) =>
    call(`list the images named ${prefix}*`, async () => {
      const items: Array<Published> = []
      for (let pageToken = "";;) {
        const page = await client.cpClient.imageListTags({
          environmentName,
          tagPrefix: prefix,
          maxObjects: PAGE,
          pageToken
        })
        items.push(...page.items)
        if (page.nextPageToken === "") return items
        pageToken = page.nextPageToken
      }
    })

  /** A published name as ImageNameDelete takes it: the environment's prefix, then `name:tag`. */
  const fullRef = (tag: string) => {
    const bare = tag.slice(tag.lastIndexOf("/") + 1)
    return environmentName === "" ? bare : `${environmentName}/${bare}`
  }

  const deleteImage = (imageId: string) =>
    call(`delete image ${imageId}`, () => client.images.delete(imageId)).pipe(Effect.catchIf(gone, () => Effect.void))

  return {
    keeps: "files",
    take: (sandbox, tags) => {
      const ref = snapshotRef(tags)
      const keep = tags[TAGS.keepAlive] === "true"
      return call(
        `snapshot sandbox ${sandbox.sandboxId}`,
        () => sandbox.snapshotFilesystem({ ttlMs: keep ? null : lifetimeMs })
      ).pipe(
        Effect.tap((image) =>
          // Unnamed, it could be found by nothing: removed when its name cannot be given.
          call(`name image ${image.imageId} ${ref}`, () => image.publish(ref)).pipe(
            Effect.tapError(() => Effect.ignore(deleteImage(image.imageId)))
          )
        ),
        Effect.map((image): FoundSnapshot => ({ id: image.imageId, tags: { ...tags }, createdAt: new Date() }))
      )
    },
    // The image first: a name left behind by a failure after it is found (and removed) again.
    remove: (imageId) =>
      Effect.gen(function*() {
        yield* deleteImage(imageId)
        for (const item of yield* published(SNAPSHOT_PREFIX)) {
          if (item.imageId !== imageId) continue
          yield* call(
            `delete image name ${item.tag}`,
            () => client.cpClient.imageNameDelete({ tag: fullRef(item.tag) })
          )
            .pipe(Effect.catchIf(gone, () => Effect.void))
        }
      }),
    find: Effect.fn("ModalRuntime.findSnapshots")(function*(tags) {
      const host = tags[TAGS.ownerHost]
      const items = yield* published(host === undefined ? SNAPSHOT_PREFIX : hostPrefix(host))
      return items.flatMap((item): Array<FoundSnapshot> => {
        const carried = parseSnapshotRef(item.tag, host ?? hostname())
        return carried !== undefined && hasTags(carried, tags)
          ? [{ id: item.imageId, tags: carried, createdAt: new Date(item.createdAt * 1000) }]
          : []
      })
    })
  }
}

/** The image of snapshot `imageId`, to start a sandbox from; a missing one is `image-missing`. */
export const snapshotImage = (client: ModalClient, call: ProviderCall, imageId: string) =>
  call(`look up snapshot ${imageId}`, () => client.images.fromId(imageId)).pipe(
    Effect.mapError((error) => gone(error) ? withReason(error, "image-missing") : error)
  )
