/**
 * E2B's snapshots as the stand-in keeps them: `POST /sandboxes/{id}/snapshots` makes a template of
 * the sandbox (its container committed while it is `snapshotting`), named `standin/<name>:default`
 * after the request's `name` (a name that exists gets the new build: the same template, its image
 * replaced, as E2B assigns "a new build to the existing template"), or after a random id without
 * one; `GET /snapshots` lists them (`{ snapshotID, names }`, filtered by `sandboxID` and `name`);
 * `DELETE /templates/{id}` removes one (404 "template '<id>' not found"). A sandbox is made from
 * one as from a template.
 *
 * E2B's snapshot keeps memory, which `docker commit` cannot: the stand-in stands for it by running
 * again, in a sandbox made from the snapshot, every process that ran in the source when it was
 * taken (its command line, as its user). A filesystem-only pause then a connect (the cold boot)
 * ends them, as it ends a VM's memory.
 */
import { randomBytes } from "node:crypto"
import { SPAWNER_PROCESS } from "../spawner.ts"
import { docker } from "./docker.ts"
import type { StandinTemplate } from "./sandboxes.ts"

/** A process of the source, as `ps` showed it: run again in a sandbox made from the snapshot. */
export interface Remembered {
  /** Its uid (the host's `ps` names users by the host's names). */
  readonly user: string
  readonly args: string
}

export interface SnapshotTemplate extends StandinTemplate {
  readonly snapshotID: string
  readonly sourceSandboxID: string
  /** What the snapshot's memory held: the processes a sandbox made from it runs at once. */
  readonly memory: ReadonlyArray<Remembered>
}

/** The repository of committed images: `removeImages()` removes the instance's tags. */
const REPOSITORY = "effect-sandbox-e2b-standin-snapshot"

/** The container's own processes (not the stand-in's spawner or Docker's init), by user and command line. */
const processesOf = async (container: string): Promise<Array<Remembered>> => {
  const top = await docker.getContainer(container).top({ ps_args: "-eo pid,uid,args" })
  return (top.Processes as Array<Array<string>>).map(([, user = "", args = ""]): Remembered => ({ user, args })).filter(
    ({ args }) => !args.startsWith("/sbin/docker-init") && !SPAWNER_PROCESS.test(args)
  )
}

export class SnapshotTemplates {
  readonly byId = new Map<string, SnapshotTemplate>()
  private readonly instance: string

  constructor(instance: string) {
    this.instance = instance
  }

  /** The template of a sandbox's container (committed as it is), under `name` or a random id. */
  async take(
    source: { readonly sandboxID: string; readonly container: string; readonly template: StandinTemplate },
    name: string | undefined
  ): Promise<SnapshotTemplate> {
    const memory = await processesOf(source.container)
    const tag = `${this.instance}-${randomBytes(4).toString("hex")}`
    await docker.getContainer(source.container).commit({ repo: REPOSITORY, tag, pause: true })
    const snapshotID = `standin/${name ?? randomBytes(10).toString("hex")}:default`
    const snapshot: SnapshotTemplate = {
      ...source.template,
      image: `${REPOSITORY}:${tag}`,
      snapshotID,
      sourceSandboxID: source.sandboxID,
      memory
    }
    this.byId.set(snapshotID, snapshot)
    return snapshot
  }

  /** `GET /snapshots`: by source sandbox and name (with or without namespace and tag), one page. */
  list(query: URLSearchParams) {
    const sandboxID = query.get("sandboxID")
    const name = query.get("name")
    return [...this.byId.values()]
      .filter((s) => sandboxID === null || s.sourceSandboxID === sandboxID)
      .filter((s) => name === null || [s.snapshotID, s.snapshotID.replace(/^.*\//, "")].some((n) => n.startsWith(name)))
      .map((s) => ({ snapshotID: s.snapshotID, names: [s.snapshotID] }))
  }

  /** Remove one; false when there is none. Its image stays until `removeImages` if a sandbox still uses it. */
  async remove(id: string): Promise<boolean> {
    const snapshot = this.byId.get(id)
    if (snapshot === undefined) return false
    this.byId.delete(id)
    await docker.getImage(snapshot.image).remove().catch(() => undefined)
    return true
  }

  /** Every committed image of this instance, removed (after its containers). */
  async removeImages(): Promise<void> {
    const images = await docker.listImages({ filters: { reference: [`${REPOSITORY}:${this.instance}-*`] } })
    for (const image of images) await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined)
  }
}
