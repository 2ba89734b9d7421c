/**
 * The stand-in's sandboxes: each one a Docker container on the local engine, labelled with the
 * stand-in's instance so `close()` removes them all, kept by Daytona's rules (its API's
 * sandbox.service.ts): the real states, a state change done in the background after the API has
 * answered (`pending` until then, as the runner's), and the refusals meanwhile (409 "Sandbox state
 * change in progress"); pause and resume only for sandboxes of class `linux-vm` or `windows` (422
 * otherwise; a snapshot is `container` unless made with another class); names unique in the
 * organisation (409 on a second create, freed on delete); and a list read from an index that may
 * lag the creates (`lagList`), as Daytona's "eventually consistent" list does. started = running,
 * stopped = stopped (disk kept, processes gone), paused = the container paused (memory kept),
 * destroyed = removed. Labels, env and the preview token live here, as in Daytona's database.
 */
import type Docker from "dockerode"
import { randomBytes, randomUUID } from "node:crypto"
import { Spawner } from "../spawner.ts"
import { ApiError, docker, labelledContainers, pauseContainer, removeLabelled } from "../standin.ts"
import { type SandboxClass, type Snapshot, SnapshotStore } from "./snapshotStore.ts"

export { ApiError, docker }
export type { SandboxClass, Snapshot }

export const STANDIN_LABEL = "effect-sandbox.daytona-standin"

/** Daytona's `SandboxState` (apps/api/src/sandbox/enums/sandbox-state.enum.ts). */
export type State =
  | "creating"
  | "restoring"
  | "destroyed"
  | "destroying"
  | "started"
  | "stopped"
  | "starting"
  | "stopping"
  | "error"
  | "build_failed"
  | "pending_build"
  | "building_snapshot"
  | "unknown"
  | "pulling_snapshot"
  | "archived"
  | "archiving"
  | "resizing"
  | "snapshotting"
  | "forking"
  | "pausing"
  | "paused"
  | "resuming"

/** Daytona's `SandboxDesiredState`. */
export type DesiredState = "destroyed" | "started" | "stopped" | "resized" | "archived" | "paused"

/** What the stand-in records of a sandbox (Daytona's `Sandbox` DTO is built from it). */
export interface StandInSandbox {
  readonly id: string
  name: string
  readonly snapshot: string
  readonly sandboxClass: SandboxClass
  readonly user: string
  readonly env: Record<string, string>
  labels: Record<string, string>
  state: State
  desiredState: DesiredState
  /** A state change is under way (the runner has not reported it done). */
  pending: boolean
  /** Why it is in `error` (Daytona's `errorReason`, which the SDK's wait puts in its message). */
  errorReason: string | undefined
  /** Counts the starts from stopped: the daemon (and the toolbox sessions in its memory) is new each time. */
  generation: number
  readonly cpu: number
  readonly memory: number
  readonly disk: number
  readonly autoStopInterval: number
  readonly autoDeleteInterval: number
  /** Egress as created: stored and shown, not enforced (the container keeps the engine's network). */
  readonly networkBlockAll: boolean
  readonly networkAllowList: string | undefined
  readonly domainAllowList: string | undefined
  readonly createdAt: string
  container: Docker.Container | undefined
  /** What starts its processes (the daemon's part): ../spawner.ts. */
  readonly spawner: Spawner
  /** The preview links' token (`x-daytona-preview-token`). */
  readonly previewToken: string
}

/** An IPv4 block as Daytona's networkAllowList takes it. */
const IPV4_BLOCK = /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/

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
  readonly networkBlockAll?: boolean
  /** Comma-separated IPv4 blocks, at most 5 (Daytona refuses more, or another form, with a 400). */
  readonly networkAllowList?: string
  readonly domainAllowList?: string
}

/** A refusal the API answered, for tests to wait on. */
export interface Refusal {
  readonly action: string
  readonly sandboxId: string
  readonly status: number
  readonly message: string
}

const GIB = 1024 ** 3

/** Daytona's `StateChangeInProgressError`. */
const inProgress = () => new ApiError(409, "Sandbox state change in progress")

const PAUSING_CLASSES: ReadonlyArray<SandboxClass> = ["linux-vm", "windows"]

export class Sandboxes {
  readonly byId = new Map<string, StandInSandbox>()
  readonly instance: string
  readonly snapshots: SnapshotStore
  readonly refusals: Array<Refusal> = []
  /** Snapshots a runner has pulled: the first sandbox of each goes through `pulling_snapshot`. */
  private readonly pulled = new Set<string>()
  /** Every state change completes only once this settles (a test holds sandboxes mid-transition). */
  hold: Promise<unknown> | undefined
  /** Created sandboxes the list's index does not show yet (`lagList`). */
  private unlisted: Set<string> | undefined
  /** Told of every state a sandbox enters, with the one it left (the event gateway's `sandbox.state.updated`). */
  onState: (sandbox: StandInSandbox, oldState: State) => void = () => undefined

  constructor(instance: string, snapshots: Readonly<Record<string, Snapshot>>) {
    this.instance = instance
    this.snapshots = new SnapshotStore(instance, snapshots)
  }

  get(idOrName: string): StandInSandbox {
    const found = this.byId.get(idOrName) ?? [...this.byId.values()].find((s) => s.name === idOrName)
    if (found === undefined || found.state === "destroyed") {
      throw new ApiError(404, `Sandbox with ID or name ${idOrName} not found`)
    }
    return found
  }

  /** A refusal, recorded and thrown. */
  private refuse(action: string, sandbox: StandInSandbox, error: ApiError): never {
    this.refusals.push({ action, sandboxId: sandbox.id, status: error.status, message: error.message })
    throw error
  }

  /**
   * A state change: `during` and `pending` at once (the API's answer), the work done in the
   * background (after `hold`), then `after`. The promise settles when it is done.
   */
  private transition(
    sandbox: StandInSandbox,
    during: State,
    desired: DesiredState,
    work: () => Promise<void>,
    after: State
  ): Promise<void> {
    const enter = (state: State, pending: boolean) => {
      const old = sandbox.state
      sandbox.state = state
      sandbox.pending = pending
      this.onState(sandbox, old)
    }
    sandbox.desiredState = desired
    enter(during, true)
    const hold = this.hold
    const done = (async () => {
      if (hold !== undefined) await hold.then(() => undefined, () => undefined)
      await work()
      enter(after, false)
    })()
    return done.catch((error: unknown) => {
      sandbox.errorReason = error instanceof Error ? error.message : String(error)
      enter("error", false)
      throw error
    })
  }

  /**
   * Create: the record at once (`creating`, or `pulling_snapshot` for a snapshot no runner has yet),
   * then the container made and started from the snapshot's image, as Daytona's runner does.
   * `sandbox` is the record as the API answers now; `done` settles once it is started.
   */
  begin(body: CreateBody): { readonly sandbox: StandInSandbox; readonly done: Promise<void> } {
    const snapshot = body.snapshot ?? "daytona-small"
    const given = this.snapshots.find(snapshot)
    if (given === undefined) throw new ApiError(404, `Snapshot ${snapshot} not found`)
    // Daytona's createFromSnapshot: only an active snapshot starts a sandbox.
    if (given.state !== "active") throw new ApiError(400, `Snapshot ${snapshot} is ${given.state}`)
    const { image, sandboxClass } = given
    const id = randomUUID()
    const name = body.name ?? id
    if ([...this.byId.values()].some((s) => s.name === name)) {
      throw new ApiError(409, `Sandbox with name ${name} already exists`)
    }
    const cpu = body.cpu ?? 1
    const memory = body.memory ?? 1
    const allowed = body.networkAllowList === undefined ? [] : body.networkAllowList.split(",")
    if (allowed.length > 5 || allowed.some((block) => !IPV4_BLOCK.test(block))) {
      throw new ApiError(400, "Invalid network allow list: at most 5 IPv4 CIDR blocks, comma-separated")
    }
    const sandbox: StandInSandbox = {
      id,
      name,
      snapshot,
      sandboxClass,
      user: body.user ?? "daytona",
      env: body.env ?? {},
      labels: body.labels ?? {},
      state: "creating",
      desiredState: "started",
      pending: true,
      errorReason: undefined,
      generation: 0,
      cpu,
      memory,
      disk: body.disk ?? 3,
      autoStopInterval: body.autoStopInterval ?? 15,
      autoDeleteInterval: body.autoDeleteInterval ?? -1,
      networkBlockAll: body.networkBlockAll ?? false,
      networkAllowList: body.networkAllowList,
      domainAllowList: body.domainAllowList,
      createdAt: new Date().toISOString(),
      container: undefined,
      spawner: new Spawner(),
      previewToken: randomBytes(16).toString("hex")
    }
    this.byId.set(id, sandbox)
    this.unlisted?.add(id)
    const pull = !this.pulled.has(snapshot)
    this.pulled.add(snapshot)
    const done = this.transition(sandbox, pull ? "pulling_snapshot" : "creating", "started", async () => {
      const container = await docker.createContainer({
        name: `daytona-standin-${this.instance}-${id.slice(0, 8)}`,
        Image: image,
        // The daemon is the sandbox's first process in Daytona: here the spawner's loop stands for
        // its process part, and keeps the container up as Daytona's default `sleep infinity` would.
        Entrypoint: sandbox.spawner.entrypoint,
        Cmd: [],
        // The spawner starts each process as its user: it runs as root whatever the image's USER.
        User: "root",
        Env: Object.entries(body.env ?? {}).map(([k, v]) => `${k}=${v}`),
        Labels: { [STANDIN_LABEL]: this.instance },
        HostConfig: { Init: true, Binds: [sandbox.spawner.bind], Memory: memory * GIB, NanoCpus: cpu * 1e9 }
      })
      sandbox.container = container
      await container.start()
    }, "started")
    return { sandbox, done }
  }

  /** Create and wait until it is started (for tests that make sandboxes behind the runtime's back). */
  async create(body: CreateBody): Promise<StandInSandbox> {
    const { done, sandbox } = this.begin(body)
    await done
    return sandbox
  }

  /** Daytona's `start`: of a stopped sandbox, or a resume of a paused one (its class allowing it). */
  start(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state === "started" && sandbox.desiredState === "started") return Promise.resolve()
    if (sandbox.state === "error" || sandbox.state === "build_failed") {
      this.refuse("start", sandbox, new ApiError(400, "Sandbox is in an errored state"))
    }
    if (sandbox.pending || sandbox.state !== sandbox.desiredState) this.refuse("start", sandbox, inProgress())
    if (!["stopped", "archived", "paused"].includes(sandbox.state)) {
      this.refuse("start", sandbox, new ApiError(400, "Sandbox is not in valid state"))
    }
    const container = sandbox.container!
    if (sandbox.state === "paused") {
      if (!PAUSING_CLASSES.includes(sandbox.sandboxClass)) {
        this.refuse("start", sandbox, new ApiError(422, "Resuming is not supported for this sandbox"))
      }
      return this.transition(sandbox, "resuming", "started", () => container.unpause(), "started")
    }
    sandbox.generation += 1
    return this.transition(sandbox, "starting", "started", () => container.start(), "started")
  }

  /** Daytona's `stop`, of a started or paused sandbox. */
  stop(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state === "error" || sandbox.state === "build_failed") {
      this.refuse("stop", sandbox, new ApiError(400, "Sandbox is in an errored state"))
    }
    if (sandbox.pending || sandbox.state !== sandbox.desiredState) this.refuse("stop", sandbox, inProgress())
    if (sandbox.state !== "started" && sandbox.state !== "paused") {
      this.refuse("stop", sandbox, new ApiError(400, "Sandbox is not in a stoppable state"))
    }
    const container = sandbox.container!
    const wasPaused = sandbox.state === "paused"
    return this.transition(sandbox, "stopping", "stopped", async () => {
      if (wasPaused) await container.unpause()
      await container.stop({ t: 1 })
    }, "stopped")
  }

  /** Daytona's `pause`: a started sandbox of a class that pauses, its memory kept. */
  pause(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.state !== "started") {
      this.refuse("pause", sandbox, new ApiError(400, "Sandbox must be in started state to pause"))
    }
    if (sandbox.pending) this.refuse("pause", sandbox, inProgress())
    if (!PAUSING_CLASSES.includes(sandbox.sandboxClass)) {
      this.refuse("pause", sandbox, new ApiError(422, "Pausing is not supported for this sandbox"))
    }
    const container = sandbox.container!
    return this.transition(sandbox, "pausing", "paused", () => pauseContainer(container.id), "paused")
  }

  /**
   * Daytona's `createSnapshotFromSandbox`: a started or stopped sandbox of a class without memory
   * snapshots, `snapshotting` while its container is committed, then back to the state it was in.
   */
  snapshot(sandbox: StandInSandbox, body: { readonly name?: string; readonly includeMemory?: boolean }): Promise<void> {
    const was = sandbox.state
    if (was !== "started" && was !== "stopped") {
      this.refuse(
        "snapshot",
        sandbox,
        new ApiError(400, "Sandbox must be in started or stopped state to create a snapshot")
      )
    }
    if (sandbox.pending) this.refuse("snapshot", sandbox, inProgress())
    if (body.includeMemory === true && sandbox.sandboxClass !== "windows") {
      this.refuse("snapshot", sandbox, new ApiError(400, "includeMemory is only supported for Windows sandboxes"))
    }
    const name = body.name ?? ""
    const desired = sandbox.desiredState
    // The commit's failure is the runner's: logged by the API, the sandbox back where it was.
    return this.transition(
      sandbox,
      "snapshotting",
      desired,
      () => this.snapshots.commit(sandbox, name).catch(() => undefined),
      was
    )
  }

  /** Daytona's `destroy`: refused while a state change is under way; the name freed at once. */
  destroy(sandbox: StandInSandbox): Promise<void> {
    if (sandbox.pending && sandbox.state !== "pending_build") this.refuse("destroy", sandbox, inProgress())
    sandbox.name = `DESTROYED_${sandbox.name}_${Date.now()}`
    const container = sandbox.container
    return this.transition(sandbox, "destroying", "destroyed", async () => {
      await container?.remove({ force: true, v: true })
      sandbox.spawner.close()
    }, "destroyed")
  }

  /** The address of the container on the bridge, where the preview proxy sends a port's traffic. */
  async address(sandbox: StandInSandbox): Promise<string> {
    const info = await sandbox.container!.inspect()
    return Object.values(info.NetworkSettings.Networks)[0]?.IPAddress ?? ""
  }

  /** Sandboxes (not destroyed) carrying every label of `labels`, as the list's index has them. */
  list(labels: Readonly<Record<string, string>>): Array<StandInSandbox> {
    return [...this.byId.values()].filter((s) =>
      s.state !== "destroyed" && this.unlisted?.has(s.id) !== true &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v)
    )
  }

  /** From now on the list does not show new sandboxes until the function returned is called. */
  lagList(): () => void {
    const unlisted = new Set<string>()
    this.unlisted = unlisted
    return () => {
      if (this.unlisted === unlisted) this.unlisted = undefined
    }
  }
}

/** Ids of the containers of `instance` (of every instance when omitted), running or not. */
export const leftovers = (instance?: string) => labelledContainers(STANDIN_LABEL, instance)

/** Remove every container of `instance`. */
export const removeAll = (instance: string) => removeLabelled(STANDIN_LABEL, instance)
