/**
 * The stand-in's disk snapshots (`POST /v1/devboxes/{id}/snapshot_disk`, `GET
 * /v1/devboxes/disk_snapshots`, `POST /v1/devboxes/disk_snapshots/{id}/delete`): each an image
 * committed from a devbox's container, so a devbox created with its `snapshot_id` starts with the
 * same disk. Runloop's rules as its SDK states them: only a running devbox's disk is snapshotted,
 * a snapshot keeps the disk and not the memory ("will not snapshot memory state such as running
 * processes"), it lives until deleted, and it outlives the devbox it came from.
 */
import { randomBytes } from "node:crypto"
import { ApiError, docker } from "../standin.ts"
import type { Devbox } from "./devboxes.ts"

/** One snapshot: Runloop's `DevboxSnapshotView`, and the image behind it. */
export interface DiskSnapshot {
  readonly id: string
  readonly image: string
  /** The blueprint its devbox was made from: devboxes made from it report it as theirs. */
  readonly blueprint: string
  readonly view: {
    readonly id: string
    readonly create_time_ms: number
    readonly metadata: Record<string, string>
    readonly source_devbox_id: string
    readonly name: string | null
  }
}

export class DiskSnapshots {
  private readonly byId = new Map<string, DiskSnapshot>()
  private readonly instance: string
  constructor(instance: string) {
    this.instance = instance
  }

  get(id: string): DiskSnapshot {
    const found = this.byId.get(id)
    if (found === undefined) throw new ApiError(404, `Disk snapshot ${id} not found`)
    return found
  }

  async take(devbox: Devbox, body: Record<string, unknown>): Promise<DiskSnapshot["view"]> {
    if (devbox.status !== "running" || devbox.container === undefined) {
      throw new ApiError(
        400,
        `Devbox ${devbox.id} is ${devbox.status}: only a running devbox's disk can be snapshotted`
      )
    }
    const id = `snp_${randomBytes(10).toString("hex")}`
    const image = `runloop-standin-snapshot-${this.instance}:${id.slice(4)}`.toLowerCase()
    const [repo, tag] = image.split(":") as [string, string]
    await devbox.container.commit({ repo, tag })
    const view = {
      id,
      create_time_ms: Date.now(),
      metadata: (body["metadata"] as Record<string, string> | undefined) ?? {},
      source_devbox_id: devbox.id,
      name: (body["name"] as string | undefined) ?? null
    }
    this.byId.set(id, { id, image, blueprint: devbox.blueprint, view })
    return view
  }

  /** Every snapshot, or those whose metadata has `metadata[<key>]=<value>` of the query. */
  list(query: URLSearchParams): Array<DiskSnapshot["view"]> {
    const wanted = [...query.entries()].flatMap(([key, value]) => {
      const name = /^metadata\[(.+)\]$/.exec(key)?.[1]
      return name === undefined ? [] : [[name, value] as const]
    })
    return [...this.byId.values()].map((snapshot) => snapshot.view).filter((view) =>
      wanted.every(([key, value]) => view.metadata[key] === value)
    )
  }

  async delete(id: string): Promise<void> {
    const snapshot = this.get(id)
    this.byId.delete(id)
    await docker.getImage(snapshot.image).remove({ force: true }).catch(() => undefined)
  }

  /** The stand-in's close: every image it committed. */
  async removeAll(): Promise<void> {
    await Promise.all([...this.byId.keys()].map((id) => this.delete(id)))
  }
}
