/**
 * The stand-in's sandboxes: each one a Docker container on the local engine, labelled with the
 * stand-in's instance so `close()` removes them all. Daytona's states map onto the container's:
 * started = running, stopped = stopped (disk kept, processes and memory gone), paused = the
 * container paused (memory kept, processes frozen), destroyed = removed. Labels, env and the
 * preview token live here, as Daytona keeps them in its database, not in the container.
 */
import type Docker from "dockerode"
import { randomBytes, randomUUID } from "node:crypto"
import { ApiError, docker, labelledContainers, removeLabelled } from "../standin.ts"

export { ApiError, docker }

export const STANDIN_LABEL = "effect-sandbox.daytona-standin"

export type State = "started" | "stopped" | "paused" | "destroyed"

/** What the stand-in records of a sandbox (Daytona's `Sandbox` DTO is built from it). */
export interface StandInSandbox {
  readonly id: string
  readonly name: string
  readonly snapshot: string
  readonly user: string
  readonly env: Record<string, string>
  labels: Record<string, string>
  state: State
  readonly cpu: number
  readonly memory: number
  readonly disk: number
  readonly autoStopInterval: number
  readonly autoDeleteInterval: number
  readonly createdAt: string
  readonly container: Docker.Container
  /** The preview links' token (`x-daytona-preview-token`). */
  readonly previewToken: string
}

/** The create body the SDK sends (`CreateSandbox`), as far as the stand-in reads it. */
export interface CreateBody {
  readonly name?: string
  readonly snapshot?: string
  readonly user?: string
  readonly env?: Record<string, string>
  readonly labels?: Record<string, string>
  readonly cpu?: number
  readonly memory?: number
  readonly disk?: number
  readonly autoStopInterval?: number
  readonly autoDeleteInterval?: number
}

const GIB = 1024 ** 3

export class Sandboxes {
  readonly byId = new Map<string, StandInSandbox>()
  readonly instance: string
  /** Snapshot name -> local image. */
  readonly snapshots: Readonly<Record<string, string>>

  constructor(instance: string, snapshots: Readonly<Record<string, string>>) {
    this.instance = instance
    this.snapshots = snapshots
  }

  get(idOrName: string): StandInSandbox {
    const found = this.byId.get(idOrName) ?? [...this.byId.values()].find((s) => s.name === idOrName)
    if (found === undefined || found.state === "destroyed") {
      throw new ApiError(404, `Sandbox with ID or name ${idOrName} not found`)
    }
    return found
  }

  /** Create and start a container from the snapshot's image, as Daytona's runner does. */
  async create(body: CreateBody): Promise<StandInSandbox> {
    const snapshot = body.snapshot ?? "daytona-small"
    const image = this.snapshots[snapshot]
    if (image === undefined) throw new ApiError(404, `Snapshot ${snapshot} not found`)
    const id = randomUUID()
    const cpu = body.cpu ?? 1
    const memory = body.memory ?? 1
    const container = await docker.createContainer({
      name: `daytona-standin-${this.instance}-${id.slice(0, 8)}`,
      Image: image,
      // The daemon is the sandbox's first process in Daytona: here a sleep keeps the container up.
      Entrypoint: ["sleep", "infinity"],
      Cmd: [],
      Env: Object.entries(body.env ?? {}).map(([k, v]) => `${k}=${v}`),
      Labels: { [STANDIN_LABEL]: this.instance },
      HostConfig: { Init: true, Memory: memory * GIB, NanoCpus: cpu * 1e9 }
    })
    await container.start()
    const sandbox: StandInSandbox = {
      id,
      name: body.name ?? id,
      snapshot,
      user: body.user ?? "daytona",
      env: body.env ?? {},
      labels: body.labels ?? {},
      state: "started",
      cpu,
      memory,
      disk: body.disk ?? 3,
      autoStopInterval: body.autoStopInterval ?? 15,
      autoDeleteInterval: body.autoDeleteInterval ?? -1,
      createdAt: new Date().toISOString(),
      container,
      previewToken: randomBytes(16).toString("hex")
    }
    this.byId.set(id, sandbox)
    return sandbox
  }

  async start(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state === "paused") await sandbox.container.unpause()
    else if (sandbox.state === "stopped") await sandbox.container.start()
    sandbox.state = "started"
  }

  async stop(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state === "paused") await sandbox.container.unpause()
    if (sandbox.state !== "stopped") await sandbox.container.stop({ t: 1 })
    sandbox.state = "stopped"
  }

  async pause(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state !== "started") throw new ApiError(400, `Sandbox is not started (state: ${sandbox.state})`)
    await sandbox.container.pause()
    sandbox.state = "paused"
  }

  async destroy(sandbox: StandInSandbox): Promise<void> {
    await sandbox.container.remove({ force: true, v: true })
    sandbox.state = "destroyed"
  }

  /** The address of the container on the bridge, where the preview proxy sends a port's traffic. */
  async address(sandbox: StandInSandbox): Promise<string> {
    const info = await sandbox.container.inspect()
    return Object.values(info.NetworkSettings.Networks)[0]?.IPAddress ?? ""
  }

  /** Sandboxes (not destroyed) carrying every label of `labels`. */
  list(labels: Readonly<Record<string, string>>): Array<StandInSandbox> {
    return [...this.byId.values()].filter((s) =>
      s.state !== "destroyed" && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
    )
  }
}

/** Ids of the containers of `instance` (of every instance when omitted), running or not. */
export const leftovers = (instance?: string) => labelledContainers(STANDIN_LABEL, instance)

/** Remove every container of `instance`. */
export const removeAll = (instance: string) => removeLabelled(STANDIN_LABEL, instance)
