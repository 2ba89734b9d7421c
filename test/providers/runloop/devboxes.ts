/**
 * The stand-in's devboxes: each one a Docker container on the local engine, labelled with the
 * stand-in's instance so `close()` removes them all. Runloop's states map onto the container's:
 * provisioning while the container is made and started, running, suspending/suspended (`docker
 * stop`: the disk is kept, memory and processes are not, as Runloop's suspend), resuming
 * (`docker start`), shutdown (removed). Metadata, launch parameters and the tunnel live here, as
 * Runloop keeps them in its database. Every state change wakes the long polls waiting on it.
 */
import type Docker from "dockerode"
import { randomBytes } from "node:crypto"
import { posix } from "node:path"
import { PassThrough } from "node:stream"
import { pack } from "tar-stream"
import { ApiError, docker, labelledContainers, removeLabelled } from "../standin.ts"

export { ApiError }

export const STANDIN_LABEL = "effect-sandbox.runloop-standin"

export type Status = "provisioning" | "running" | "suspending" | "suspended" | "resuming" | "failure" | "shutdown"

/** The create body the SDK sends (`DevboxCreateParams`), as far as the stand-in reads it. */
export interface CreateBody {
  readonly blueprint_name?: string
  readonly name?: string
  readonly metadata?: Record<string, string>
  readonly environment_variables?: Record<string, string>
  readonly tunnel?: { readonly auth_mode?: "open" | "authenticated"; readonly http_keep_alive?: boolean }
  readonly launch_parameters?: {
    readonly resource_size_request?: string
    readonly custom_cpu_cores?: number
    readonly custom_gb_memory?: number
    readonly user_parameters?: { readonly username: string; readonly uid: number }
  } & Record<string, unknown>
}

export interface Tunnel {
  readonly tunnel_key: string
  readonly auth_mode: "open" | "authenticated"
  readonly auth_token: string | null
  readonly http_keep_alive: boolean
  readonly create_time_ms: number
}

/** An execution: a `docker exec` of `sh -c <command>` as the devbox user. */
export interface Execution {
  readonly id: string
  readonly devboxId: string
  status: "running" | "completed"
  exitStatus: number | null
  stdout: string
  stderr: string
  readonly done: Promise<void>
}

export interface Devbox {
  readonly id: string
  readonly name: string
  readonly blueprint: string
  readonly metadata: Record<string, string>
  readonly launchParameters: NonNullable<CreateBody["launch_parameters"]>
  readonly createTimeMs: number
  readonly uid: number
  /** The devbox user's home, where `upload_file` paths start. */
  readonly home: string
  status: Status
  tunnel: Tunnel | null
  container: Docker.Container | undefined
  readonly transitions: Array<{ status: Status; transition_time_ms: number }>
  keepAlives: number
}

/** Runloop's sizes as container limits (CPU, GiB). */
const SIZES: Record<string, readonly [number, number]> = {
  X_SMALL: [0.5, 1],
  SMALL: [1, 2],
  MEDIUM: [2, 4],
  LARGE: [2, 8],
  X_LARGE: [4, 16],
  XX_LARGE: [8, 32]
}
const GIB = 1024 ** 3

export const newTunnel = (authMode: "open" | "authenticated", httpKeepAlive: boolean): Tunnel => ({
  tunnel_key: randomBytes(12).toString("hex"),
  auth_mode: authMode,
  auth_token: authMode === "authenticated" ? randomBytes(16).toString("hex") : null,
  http_keep_alive: httpKeepAlive,
  create_time_ms: Date.now()
})

export class Devboxes {
  readonly byId = new Map<string, Devbox>()
  readonly executions = new Map<string, Execution>()
  private readonly waiters = new Set<() => void>()

  readonly instance: string
  /** Blueprint name -> local image. */
  readonly blueprints: Readonly<Record<string, string>>

  constructor(instance: string, blueprints: Readonly<Record<string, string>>) {
    this.instance = instance
    this.blueprints = blueprints
  }

  get(id: string): Devbox {
    const found = this.byId.get(id)
    if (found === undefined) throw new ApiError(404, `Devbox ${id} not found`)
    return found
  }

  /** Wake every long poll (a state or an execution changed). */
  changed(): void {
    for (const wake of this.waiters) wake()
  }

  /** Resolves with `check()`'s value once it has one, or with undefined after `holdMs`. */
  waitFor<A>(check: () => A | undefined, holdMs: number): Promise<A | undefined> {
    const now = check()
    if (now !== undefined) return Promise.resolve(now)
    return new Promise((resolve) => {
      const done = (value: A | undefined) => {
        this.waiters.delete(wake)
        clearTimeout(timer)
        resolve(value)
      }
      const wake = () => {
        const value = check()
        if (value !== undefined) done(value)
      }
      const timer = setTimeout(() => done(undefined), holdMs)
      this.waiters.add(wake)
    })
  }

  private setStatus(devbox: Devbox, status: Status): void {
    devbox.status = status
    devbox.transitions.push({ status, transition_time_ms: Date.now() })
    this.changed()
  }

  /** Record a devbox (provisioning) and start its container in the background, as Runloop's scheduler does. */
  create(body: CreateBody): Devbox {
    const blueprint = body.blueprint_name ?? ""
    const image = this.blueprints[blueprint]
    if (image === undefined) throw new ApiError(404, `Blueprint with name ${blueprint} not found`)
    const id = `dbx_${randomBytes(10).toString("hex")}`
    const launch = body.launch_parameters ?? {}
    const devbox: Devbox = {
      id,
      name: body.name ?? id,
      blueprint,
      metadata: body.metadata ?? {},
      launchParameters: launch,
      createTimeMs: Date.now(),
      uid: launch.user_parameters?.uid ?? 1000,
      home: `/home/${launch.user_parameters?.username ?? "user"}`,
      status: "provisioning",
      tunnel: body.tunnel === undefined
        ? null
        : newTunnel(body.tunnel.auth_mode ?? "open", body.tunnel.http_keep_alive ?? true),
      container: undefined,
      transitions: [{ status: "provisioning", transition_time_ms: Date.now() }],
      keepAlives: 0
    }
    this.byId.set(id, devbox)
    const [cpu, memory] = launch.resource_size_request === "CUSTOM_SIZE"
      ? [launch.custom_cpu_cores ?? 1, launch.custom_gb_memory ?? 2]
      : SIZES[launch.resource_size_request ?? "SMALL"] ?? [1, 2]
    void (async () => {
      const container = await docker.createContainer({
        name: `runloop-standin-${this.instance}-${id.slice(4, 12)}`,
        Image: image,
        // Runloop's own init keeps a devbox up; here a sleep does.
        Entrypoint: ["sleep", "infinity"],
        Cmd: [],
        Env: Object.entries(body.environment_variables ?? {}).map(([k, v]) => `${k}=${v}`),
        Labels: { [STANDIN_LABEL]: this.instance },
        HostConfig: { Init: true, Memory: memory * GIB, NanoCpus: cpu * 1e9 }
      })
      devbox.container = container
      // Shut down while provisioning: nothing more to start.
      if (devbox.status === "shutdown") return container.remove({ force: true, v: true })
      await container.start()
      this.setStatus(devbox, "running")
    })().catch(() => this.setStatus(devbox, "failure"))
    return devbox
  }

  private running(devbox: Devbox, what: string): Docker.Container {
    if (devbox.status !== "running" || devbox.container === undefined) {
      throw new ApiError(400, `Devbox ${devbox.id} is ${devbox.status}: cannot ${what}`)
    }
    return devbox.container
  }

  async suspend(devbox: Devbox): Promise<void> {
    const container = this.running(devbox, "suspend")
    this.setStatus(devbox, "suspending")
    void container.stop({ t: 1 }).then(
      () => this.setStatus(devbox, "suspended"),
      () => this.setStatus(devbox, "failure")
    )
  }

  async resume(devbox: Devbox): Promise<void> {
    if (devbox.status !== "suspended" || devbox.container === undefined) {
      throw new ApiError(400, `Devbox ${devbox.id} is ${devbox.status}: only a suspended devbox can be resumed`)
    }
    this.setStatus(devbox, "resuming")
    void devbox.container.start().then(() => this.setStatus(devbox, "running"), () => this.setStatus(devbox, "failure"))
  }

  async shutdown(devbox: Devbox): Promise<void> {
    if (devbox.status === "shutdown") return
    this.setStatus(devbox, "shutdown")
    await devbox.container?.remove({ force: true, v: true }).catch(() => {})
  }

  /** Start `sh -c command` as the devbox user; the execution completes with its exit status and output. */
  async execute(devbox: Devbox, command: string, id = `exe_${randomBytes(10).toString("hex")}`): Promise<Execution> {
    const container = this.running(devbox, "execute")
    const exec = await container.exec({
      Cmd: ["sh", "-c", command],
      User: String(devbox.uid),
      AttachStdout: true,
      AttachStderr: true
    })
    const stream = await exec.start({ hijack: true, stdin: false })
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    docker.modem.demuxStream(stream, stdout, stderr)
    const execution: Execution = {
      id,
      devboxId: devbox.id,
      status: "running",
      exitStatus: null,
      stdout: "",
      stderr: "",
      done: new Promise((resolve) => {
        stream.on("close", resolve)
        stream.on("end", resolve)
        // A container removed under a running command (a devbox shut down, or reaped) may reset the stream.
        stream.on("error", resolve)
      }).then(async () => {
        const info = await exec.inspect().catch(() => undefined)
        execution.exitStatus = info?.ExitCode ?? 137
        execution.status = "completed"
        this.changed()
      })
    }
    stdout.on("data", (chunk: Buffer) => execution.stdout += chunk.toString("utf8"))
    stderr.on("data", (chunk: Buffer) => execution.stderr += chunk.toString("utf8"))
    this.executions.set(id, execution)
    return execution
  }

  /** Write a file as the devbox user (a tar with the user's uid, put into the running container). */
  async writeFile(devbox: Devbox, path: string, contents: string | Buffer, mode = 0o600): Promise<void> {
    const container = this.running(devbox, "write a file")
    const tar = pack()
    tar.entry({ name: posix.basename(path), mode, uid: devbox.uid, gid: devbox.uid }, contents)
    tar.finalize()
    await container.putArchive(tar as unknown as NodeJS.ReadableStream, { path: posix.dirname(path) })
  }

  /** The container's address on the bridge, where the tunnel sends a port's traffic. */
  async address(devbox: Devbox): Promise<string> {
    const info = await this.running(devbox, "reach a port").inspect()
    return Object.values(info.NetworkSettings.Networks)[0]?.IPAddress ?? ""
  }

  /** Devboxes in creation order, of `status` when given. */
  list(status: string | null): Array<Devbox> {
    return [...this.byId.values()].filter((d) => status === null || d.status === status)
  }

  byTunnelKey(key: string): Devbox | undefined {
    return [...this.byId.values()].find((d) => d.tunnel?.tunnel_key === key)
  }
}

/** Ids of the containers of `instance` (of every instance when omitted), running or not. */
export const leftovers = (instance?: string) => labelledContainers(STANDIN_LABEL, instance)

/** Remove every container of `instance`. */
export const removeAll = (instance: string) => removeLabelled(STANDIN_LABEL, instance)
