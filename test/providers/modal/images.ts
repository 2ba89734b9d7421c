/**
 * The Modal stand-in's images: ids of images on the engine (the published ones a test gives, those
 * `ImageGetOrCreate` "builds" from a reference, and filesystem snapshots of sandboxes), and the
 * published names (`name:tag`) pointing at them. Modal's rules for snapshot images: made only of a
 * running sandbox (router.ts checks that), by a `docker commit` of its container; a fresh id per
 * snapshot (the same one for a request sent again with its `snapshot_id`); a lifetime counted from
 * the taking (`ttl_seconds`, -1 for none), after which the image is not found; deleted by id.
 * Names are listed by a prefix of `name:tag`, at most 100 a page, and deleted by name.
 *
 * Where Modal's sources leave it open, the reading less favourable to the runtime: a name outlives
 * its image (deleted or expired), still listed, pointing at an image that is not found.
 */
import { status } from "@grpc/grpc-js"
import { createHash, randomBytes } from "node:crypto"
import { Refusal } from "./calls.ts"
import { docker, STANDIN_LABEL } from "./docker.ts"

/** The label of the engine images the stand-in's snapshots made (value: the instance). */
const SNAPSHOT_LABEL = `${STANDIN_LABEL}.snapshot`

/** Modal's object-name rule (the SDK's `checkObjectName`), for an image's name and its tag. */
const OBJECT_NAME = /^[A-Za-z0-9._-]{1,64}$/

interface StandinImage {
  readonly engineImage: string
  /** When it stops existing (ms since the epoch); undefined: never. */
  readonly expiresAt: number | undefined
}

export interface PublishedName {
  readonly imageId: string
  /** Seconds since the epoch (ImageListTagsItem). */
  readonly createdAt: number
  readonly updatedAt: number
}

export class Images {
  private readonly byId = new Map<string, StandinImage>()
  /** Published `name:tag` → the image it names. */
  readonly names = new Map<string, PublishedName>()
  /** A snapshot request's `snapshot_id` → the image it made (a request sent again makes no second one). */
  private readonly snapshots = new Map<string, string>()
  private readonly instance: string

  /** `published`: name (`:latest` when untagged) → image on the engine. */
  constructor(instance: string, published: Readonly<Record<string, string>>) {
    this.instance = instance
    for (const [name, engineImage] of Object.entries(published)) {
      this.name(name.includes(":") ? name : `${name}:latest`, this.idOf(engineImage))
    }
  }

  /** The id of an image on the engine (one per reference, as Modal's cache of a recipe). */
  idOf(engineImage: string): string {
    const id = `im-${createHash("sha256").update(engineImage).digest("hex").slice(0, 22)}`
    this.byId.set(id, { engineImage, expiresAt: undefined })
    return id
  }

  /** The engine image of `id`, unless it does not exist (never made, deleted, expired). */
  engineImage(id: string): string | undefined {
    const image = this.byId.get(id)
    return image === undefined || (image.expiresAt !== undefined && Date.now() >= image.expiresAt)
      ? undefined
      : image.engineImage
  }

  /** `ImageFromId`: the image, or NOT_FOUND. */
  fromId(id: string): string {
    if (this.engineImage(id) === undefined) throw new Refusal(status.NOT_FOUND, `Image ${id} not found`)
    return id
  }

  /** `ImageGetByTag`: the image a name points at, or NOT_FOUND (also where the image is gone). */
  byName(tag: string): string {
    const named = this.names.get(tag)
    if (named === undefined || this.engineImage(named.imageId) === undefined) {
      throw new Refusal(status.NOT_FOUND, `Could not find published image '${tag}'`)
    }
    return named.imageId
  }

  /** `ImagePublish`: `tag` (`name:tag`, as the SDK sends it) names the image from now on. */
  publish(tag: string, imageId: string) {
    const [name = "", version = ""] = tag.split(":")
    if (!OBJECT_NAME.test(name) || name.startsWith("im-") || !OBJECT_NAME.test(version)) {
      throw new Refusal(status.INVALID_ARGUMENT, `Invalid image name: '${tag}'`)
    }
    if (this.engineImage(imageId) === undefined) throw new Refusal(status.NOT_FOUND, `Image ${imageId} not found`)
    this.name(tag, imageId)
  }

  private name(tag: string, imageId: string) {
    const now = Date.now() / 1000
    this.names.set(tag, { imageId, createdAt: this.names.get(tag)?.createdAt ?? now, updatedAt: now })
  }

  /**
   * `ImageListTags`: the names beginning with `prefix`, in order, `maxObjects` (default 100, more
   * refused) from the offset `pageToken` gives.
   */
  list(prefix: string, maxObjects: number, pageToken: string) {
    if (maxObjects > 100) throw new Refusal(status.INVALID_ARGUMENT, "max_objects must be at most 100")
    const start = Number(pageToken || "0")
    const matching = [...this.names.keys()].filter((tag) => tag.startsWith(prefix)).sort()
    const page = matching.slice(start, start + (maxObjects || 100))
    const next = start + page.length
    return {
      items: page.map((tag) => ({ tag, revisionId: "", ...this.names.get(tag)! })),
      nextPageToken: next < matching.length ? String(next) : "",
      environmentName: "main"
    }
  }

  /** `ImageNameDelete`: the name (an environment's `env/` prefix dropped) goes; the image stays. */
  deleteName(tag: string) {
    const bare = tag.slice(tag.lastIndexOf("/") + 1)
    if (!this.names.delete(bare)) throw new Refusal(status.NOT_FOUND, `Image name '${bare}' not found`)
  }

  /**
   * `ImageDelete`: no sandbox starts from it any more (the SDK reads "Could not find image with ID"
   * as not found); its engine image goes once no container uses it (at the latest on `close`).
   */
  async delete(id: string) {
    const image = this.engineImage(id) === undefined ? undefined : this.byId.get(id)
    if (image === undefined) throw new Refusal(status.FAILED_PRECONDITION, `Could not find image with ID ${id}`)
    this.byId.delete(id)
    if (this.isSnapshot(image)) await docker.getImage(image.engineImage).remove().catch(() => undefined)
  }

  private isSnapshot(image: StandinImage) {
    return image.engineImage.startsWith(`modal-standin-${this.instance}-snapshot:`)
  }

  /**
   * A filesystem snapshot of `container` (a running sandbox's): its commit (paused meanwhile, as
   * docker does), a fresh image id living `ttlSeconds` (-1: for ever). `snapshotId` makes it
   * idempotent.
   */
  async snapshot(container: string, snapshotId: string, ttlSeconds: number): Promise<string> {
    const again = this.snapshots.get(snapshotId)
    if (again !== undefined) return again
    const id = `im-${randomBytes(11).toString("hex")}`
    const repo = `modal-standin-${this.instance}-snapshot`
    await docker.getContainer(container).commit({
      repo,
      tag: id.slice(3),
      pause: true,
      changes: `LABEL ${SNAPSHOT_LABEL}=${this.instance}`
    })
    this.byId.set(id, {
      engineImage: `${repo}:${id.slice(3)}`,
      expiresAt: ttlSeconds === -1 ? undefined : Date.now() + ttlSeconds * 1000
    })
    this.snapshots.set(snapshotId, id)
    return id
  }

  /** Ids of the snapshot images that exist now (not deleted, not expired). */
  snapshotIds(): Array<string> {
    return [...this.byId.keys()].filter((id) =>
      this.isSnapshot(this.byId.get(id)!) && this.engineImage(id) !== undefined
    )
  }

  /** Remove every engine image the snapshots made (after the containers: none uses them then). */
  async close() {
    const made = await docker.listImages({ filters: JSON.stringify({ label: [`${SNAPSHOT_LABEL}=${this.instance}`] }) })
    await Promise.all(made.map((image) => docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)))
  }
}
