/**
 * The stand-in's snapshots, by Daytona's rules (its API's snapshot.service.ts and
 * persist-snapshot-from-sandbox.ts): the ones a test configures (an image, active), and the ones
 * taken of a sandbox (`POST /sandbox/{id}/snapshot`: a `docker commit` of its container, the
 * container's files and nothing of its memory), each inserted `active` once the commit is done, or
 * not at all when its name is taken by then (Daytona's unique name: the API logs the conflict and
 * the sandbox goes back to its state). `GET /snapshots/{idOrName}` is 404 "Snapshot X not found";
 * a delete marks it `removing` (its image goes in the background, after the sandboxes' `hold`).
 */
import { randomUUID } from "node:crypto"
import { docker } from "../standin.ts"
import type { StandInSandbox } from "./sandboxes.ts"

/** Daytona's `SnapshotState`. */
export type SnapshotState =
  | "building"
  | "pending"
  | "pulling"
  | "snapshotting"
  | "active"
  | "inactive"
  | "error"
  | "build_failed"
  | "removing"

/** Daytona's `SandboxClass`. */
export type SandboxClass = "linux-vm" | "container" | "android" | "windows"

/** A configured snapshot: its local image, and its class (default `container`, as Daytona's). */
export type Snapshot = string | { readonly image: string; readonly sandboxClass?: SandboxClass }

export interface StandInSnapshot {
  readonly id: string
  readonly name: string
  readonly image: string
  readonly sandboxClass: SandboxClass
  state: SnapshotState
  readonly createdAt: string
  readonly sourceSandboxId: string | null
}

/** Daytona's `SnapshotDto`, as the SDK reads it. */
export const snapshotDto = (snapshot: StandInSnapshot) => ({
  id: snapshot.id,
  organizationId: "standin-org",
  general: false,
  name: snapshot.name,
  imageName: snapshot.image,
  state: snapshot.state,
  size: null,
  entrypoint: null,
  cpu: 1,
  gpu: 0,
  mem: 1,
  disk: 3,
  errorReason: null,
  createdAt: snapshot.createdAt,
  updatedAt: snapshot.createdAt,
  lastUsedAt: null,
  sourceSandboxId: snapshot.sourceSandboxId,
  sandboxClass: snapshot.sandboxClass
})

/** The repository of committed images: `close()` removes the instance's tags. */
const TAKEN_REPOSITORY = "effect-sandbox-daytona-standin-snapshot"

export class SnapshotStore {
  readonly byId = new Map<string, StandInSnapshot>()
  private readonly instance: string

  constructor(instance: string, configured: Readonly<Record<string, Snapshot>>) {
    this.instance = instance
    for (const [name, given] of Object.entries(configured)) this.configure(name, given)
  }

  /** A snapshot of an image, active: one a test maps a name to, or (`sourceSandboxId`) one taken meanwhile of another sandbox. */
  configure(name: string, given: Snapshot, sourceSandboxId: string | null = null): StandInSnapshot {
    const { image, sandboxClass = "container" } = typeof given === "string" ? { image: given } : given
    return this.insert({ name, image, sandboxClass, sourceSandboxId })
  }

  private insert(input: Omit<StandInSnapshot, "id" | "state" | "createdAt">): StandInSnapshot {
    const snapshot = { ...input, id: randomUUID(), state: "active" as const, createdAt: new Date().toISOString() }
    this.byId.set(snapshot.id, snapshot)
    return snapshot
  }

  /** The snapshot of this name (or id), undefined if there is none. */
  find(idOrName: string): StandInSnapshot | undefined {
    return this.byId.get(idOrName) ?? [...this.byId.values()].find((s) => s.name === idOrName)
  }

  /** Taken of a sandbox: its container committed, then inserted active; nothing when the name is taken by then. */
  async commit(sandbox: StandInSandbox, name: string): Promise<void> {
    const tag = `${this.instance}-${randomUUID().slice(0, 8)}`
    await sandbox.container!.commit({ repo: TAKEN_REPOSITORY, tag, pause: true })
    const image = `${TAKEN_REPOSITORY}:${tag}`
    if (this.find(name) !== undefined) {
      await docker.getImage(image).remove().catch(() => undefined)
      return
    }
    this.insert({ name, image, sandboxClass: sandbox.sandboxClass, sourceSandboxId: sandbox.id })
  }

  /** Daytona's delete: `removing` at once; the record and a taken snapshot's image go once `hold` settles. */
  remove(snapshot: StandInSnapshot, hold: Promise<unknown> | undefined): void {
    snapshot.state = "removing"
    void (async () => {
      if (hold !== undefined) await hold.then(() => undefined, () => undefined)
      this.byId.delete(snapshot.id)
      // An image still used by a sandbox's container stays until close() (Daytona keeps it on the runner too).
      if (snapshot.sourceSandboxId !== null) await docker.getImage(snapshot.image).remove().catch(() => undefined)
    })()
  }

  /** One page of the list, as `GET /snapshots?page&limit` answers. */
  page(page: number, limit: number) {
    const all = [...this.byId.values()]
    return {
      items: all.slice((page - 1) * limit, page * limit).map(snapshotDto),
      total: all.length,
      page,
      totalPages: Math.max(1, Math.ceil(all.length / limit))
    }
  }

  /** The snapshots taken of sandboxes and not yet deleted (a test asserts none is left). */
  taken(): Array<StandInSnapshot> {
    return [...this.byId.values()].filter((s) => s.sourceSandboxId !== null)
  }

  /** Every committed image of this instance, removed (after its containers). */
  async removeImages(): Promise<void> {
    const images = await docker.listImages({ filters: { reference: [`${TAKEN_REPOSITORY}:${this.instance}-*`] } })
    for (const image of images) await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)
  }
}
