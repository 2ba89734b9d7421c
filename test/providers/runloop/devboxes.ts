/**
 * The stand-in's devboxes: each one a Docker container on the local engine, labelled with the
 * stand-in's instance so `close()` removes them all. Runloop's states map onto the container's:
 * provisioning while the container is made, initializing while it starts, running,
 * suspending/suspended (`docker stop`: the disk is kept, memory and processes are not, as Runloop's
 * suspend), resuming (`docker start`), shutdown (removed). A test may hold every transition
 * (`holdTransitions`) to catch a devbox between two states. Metadata, launch parameters and the
 * tunnel live here, as Runloop keeps them in its database. Every state change wakes the long polls
 * waiting on it.
 *
 * Two of Runloop's rules the SDK documents, enforced as the less favourable reading:
 * - a named shell (`shell_name`) is one persistent shell per devbox running its commands in turn
 *   (stateful, sequential), which reports each command's exit status after it: a command that
 *   `exec`s replaces that shell, and its execution never completes (nor does one that `exit`s it);
 * - `keep_alive_time_seconds` (default 1 hour) shuts a devbox down that long after its creation,
 *   ignored only when the deprecated top-level `launch_parameters.after_idle` is set.
 */
import type Docker from "dockerode"
import { randomBytes } from "node:crypto"
import { posix } from "node:path"
import type { Readable } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import { pack } from "tar-stream"
import { Spawner } from "../spawner.ts"
import { ApiError, docker, labelledContainers, removeLabelled } from "../standin.ts"
import { markedOutput } from "./markedOutput.ts"

export { ApiError }

export const STANDIN_LABEL = "effect-sandbox.runloop-standin"

export type Status =
  | "provisioning"
  | "initializing"
  | "running"
  | "suspending"
  | "suspended"
  | "resuming"
  | "failure"
  | "shutdown"

/** Runloop's default `keep_alive_time_seconds`: an hour. */
const DEFAULT_KEEP_ALIVE_SECONDS = 3600

/** The create body the SDK sends (`DevboxCreateParams`), as far as the stand-in reads it. */
export interface CreateBody {
  readonly blueprint_name?: string
  readonly snapshot_id?: string
  readonly name?: string
  readonly metadata?: Record<string, string>
  readonly environment_variables?: Record<string, string>
  readonly tunnel?: { readonly auth_mode?: "open" | "authenticated"; readonly http_keep_alive?: boolean }
  readonly launch_parameters?: {
    readonly keep_alive_time_seconds?: number | null
    readonly after_idle?: unknown
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

/**
 * An execution: `sh -c <command>` as the devbox user, started by the devbox's spawner, or a command of a named
 * shell. Its output grows while it runs (every change wakes the long polls and the output streams).
 */
export interface Execution {
  readonly id: string
  readonly devboxId: string
  status: "running" | "completed"
  exitStatus: number | null
  stdout: string
  stderr: string
  readonly done: Promise<void>
}

/** An execution's two output streams. */
export type Channel = "stdout" | "stderr"

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
  /** What starts its processes (Runloop's daemon's part): ../spawner.ts. */
  readonly spawner: Spawner
  readonly transitions: Array<{ status: Status; transition_time_ms: number }>
  keepAlives: number
  /** Why it was shut down (Runloop's `shutdown_reason`). */
  shutdownReason: string | undefined
  /** When `keep_alive_time_seconds` shuts it down (ms since the epoch); undefined when it is ignored. */
  readonly lifeEndsAt: number | undefined
  /** Its named shells, by name. */
  readonly shells: Map<string, NamedShell>
}

/** How an execution ended: its exit status and output. */
type Ended = Pick<Execution, "stdout" | "stderr"> & { readonly exitStatus: number }

/** A command sent to a named shell, until the shell's marks after it came on both its streams. */
interface Pending {
  readonly execution: Execution
  /** Its exit status, from the mark on standard output. */
  exitStatus: number | undefined
  /** Whether the mark on standard error came (the two streams reach the stand-in each in its own order). */
  stderrEnded: boolean
  readonly end: (exitStatus: number) => void
}

/** A persistent shell: its commands written to its stdin in turn. */
interface NamedShell {
  readonly write: (line: string) => void
  /** The commands not yet ended, by execution id, in the order sent. */
  readonly pending: Map<string, Pending>
}

/** What a named shell prints after each command (devboxes of every stand-in: a command cannot forge it). */
const MARK = `runloop-standin-${randomBytes(6).toString("hex")}`

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
  private readonly timers = new Set<NodeJS.Timeout>()
  /** While set, every state change waits for it (a devbox caught mid-transition). */
  private held: Promise<unknown> | undefined

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

  /** Resolves with `check()`'s value once it has one, or with undefined after `holdMs` or once `signal` aborts. */
  waitFor<A>(check: () => A | undefined, holdMs: number, signal?: AbortSignal): Promise<A | undefined> {
    const now = check()
    if (now !== undefined || signal?.aborted === true) return Promise.resolve(now)
    return new Promise((resolve) => {
      const done = (value: A | undefined) => {
        this.waiters.delete(wake)
        clearTimeout(timer)
        signal?.removeEventListener("abort", gone)
        resolve(value)
      }
      const wake = () => {
        const value = check()
        if (value !== undefined) done(value)
      }
      const gone = () => done(undefined)
      const timer = setTimeout(gone, holdMs)
      signal?.addEventListener("abort", gone)
      this.waiters.add(wake)
    })
  }

  /** Hold every transition (creation, suspend, resume) until `until` settles. */
  holdTransitions(until: Promise<unknown>): void {
    const held = until.then(() => undefined, () => undefined)
    this.held = held
    void held.then(() => {
      if (this.held === held) this.held = undefined
    })
  }

  /** Resolves once no hold is set. */
  private async transition(): Promise<void> {
    while (this.held !== undefined) await this.held
  }

  /** Stop the devboxes' clocks (the stand-in's close). */
  stopClocks(): void {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }

  private setStatus(devbox: Devbox, status: Status): void {
    devbox.status = status
    devbox.transitions.push({ status, transition_time_ms: Date.now() })
    this.changed()
  }

  /** Record a devbox (provisioning) and start its container in the background, as Runloop's scheduler does. */
  create(body: CreateBody, snapshot?: { readonly image: string; readonly blueprint: string }): Devbox {
    // Runloop: "Only one of (Snapshot ID, Blueprint ID, Blueprint name) should be specified."
    if (snapshot !== undefined && body.blueprint_name !== undefined) {
      throw new ApiError(400, "Only one of snapshot_id and blueprint_name may be given")
    }
    const blueprint = snapshot?.blueprint ?? body.blueprint_name ?? ""
    const image = snapshot?.image ?? this.blueprints[blueprint]
    if (image === undefined) throw new ApiError(404, `Blueprint with name ${blueprint} not found`)
    const id = `dbx_${randomBytes(10).toString("hex")}`
    const launch = body.launch_parameters ?? {}
    const now = Date.now()
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
      spawner: new Spawner(),
      transitions: [{ status: "provisioning", transition_time_ms: now }],
      keepAlives: 0,
      shutdownReason: undefined,
      lifeEndsAt: launch.after_idle == null
        ? now + (launch.keep_alive_time_seconds ?? DEFAULT_KEEP_ALIVE_SECONDS) * 1000
        : undefined,
      shells: new Map()
    }
    this.byId.set(id, devbox)
    if (devbox.lifeEndsAt !== undefined) {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        void this.shutdown(devbox, "keep_alive_timeout")
      }, devbox.lifeEndsAt - now)
      timer.unref()
      this.timers.add(timer)
    }
    const [cpu, memory] = launch.resource_size_request === "CUSTOM_SIZE"
      ? [launch.custom_cpu_cores ?? 1, launch.custom_gb_memory ?? 2]
      : SIZES[launch.resource_size_request ?? "SMALL"] ?? [1, 2]
    const shutDown = () => (devbox.status as Status) === "shutdown"
    void (async () => {
      const container = await docker.createContainer({
        name: `runloop-standin-${this.instance}-${id.slice(4, 12)}`,
        Image: image,
        // Runloop's own init keeps a devbox up and runs its executions; here the spawner's loop does.
        Entrypoint: devbox.spawner.entrypoint,
        Cmd: [],
        User: "root",
        Env: Object.entries(body.environment_variables ?? {}).map(([k, v]) => `${k}=${v}`),
        Labels: { [STANDIN_LABEL]: this.instance },
        HostConfig: { Init: true, Binds: [devbox.spawner.bind], Memory: memory * GIB, NanoCpus: cpu * 1e9 }
      })
      devbox.container = container
      await this.transition()
      // Shut down while provisioning: nothing more to start.
      if (shutDown()) return container.remove({ force: true, v: true })
      this.setStatus(devbox, "initializing")
      await container.start()
      await this.transition()
      if (!shutDown()) this.setStatus(devbox, "running")
    })().catch(() => shutDown() || this.setStatus(devbox, "failure"))
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
    devbox.shells.clear()
    void container.stop({ t: 1 }).then(() => this.transition()).then(
      () => this.setStatus(devbox, "suspended"),
      () => this.setStatus(devbox, "failure")
    )
  }

  async resume(devbox: Devbox): Promise<void> {
    if (devbox.status !== "suspended" || devbox.container === undefined) {
      throw new ApiError(400, `Devbox ${devbox.id} is ${devbox.status}: only a suspended devbox can be resumed`)
    }
    this.setStatus(devbox, "resuming")
    void devbox.container.start().then(() => this.transition()).then(
      () => this.setStatus(devbox, "running"),
      () => this.setStatus(devbox, "failure")
    )
  }

  async shutdown(devbox: Devbox, reason = "api_shutdown"): Promise<void> {
    if (devbox.status === "shutdown") return
    devbox.shutdownReason = reason
    this.setStatus(devbox, "shutdown")
    await devbox.container?.remove({ force: true, v: true }).catch(() => {})
    devbox.spawner.close()
  }

  /**
   * Start `command` as the devbox user: in a fresh `sh -c`, or in the devbox's persistent shell
   * `shellName` after the commands sent to it before; the execution completes with its exit status
   * and output.
   */
  async execute(
    devbox: Devbox,
    command: string,
    id = `exe_${randomBytes(10).toString("hex")}`,
    shellName?: string
  ): Promise<Execution> {
    this.running(devbox, "execute")
    let resolveEnded!: (ended: Ended) => void
    const ending = new Promise<Ended>((resolve) => resolveEnded = resolve)
    const execution: Execution = {
      id,
      devboxId: devbox.id,
      status: "running",
      exitStatus: null,
      stdout: "",
      stderr: "",
      done: ending.then((ended) => {
        Object.assign(execution, ended, { status: "completed" })
        this.changed()
      })
    }
    this.executions.set(id, execution)
    if (shellName === undefined) {
      void this.run(devbox, ["sh", "-c", command], execution).then(resolveEnded)
      return execution
    }
    const shell = devbox.shells.get(shellName) ?? this.namedShell(devbox, shellName)
    shell.pending.set(id, {
      execution,
      exitStatus: undefined,
      stderrEnded: false,
      end: (exitStatus) => resolveEnded({ exitStatus, stdout: execution.stdout, stderr: execution.stderr })
    })
    // In the shell itself (its state persists), then its status marked on both streams.
    shell.write(
      `{\n${command}\n}\n__rl_status=$?; printf '\\000${MARK} %s %s\\n' ${id} "$__rl_status"; ` +
        `printf '\\000${MARK} %s\\n' ${id} >&2; unset __rl_status\n`
    )
    return execution
  }

  /** Run `cmd` as the devbox user to its end: its exit status (137: the container went) and output. */
  private async run(devbox: Devbox, cmd: Array<string>, live?: Execution) {
    const spawned = devbox.spawner.start({ argv: cmd, user: String(devbox.uid) })
    const output = live ?? { stdout: "", stderr: "" }
    this.follow(spawned.stdout, (text) => output.stdout += text)
    this.follow(spawned.stderr, (text) => output.stderr += text)
    const exitCode = await spawned.ended
    return { exitStatus: exitCode === -1 ? 137 : exitCode, stdout: output.stdout, stderr: output.stderr }
  }

  /** A stream's text as it comes (characters split over chunks decoded whole), each piece waking the waits. */
  private follow(stream: Readable, onText: (text: string) => void): void {
    const decoder = new StringDecoder("utf8")
    stream.on("data", (chunk: Buffer) => {
      const text = decoder.write(chunk)
      if (text === "") return
      onText(text)
      this.changed()
    })
  }

  /**
   * A persistent `sh` as the devbox user, reading commands from its stdin; after each it marks its
   * standard output with `<id> <status>` and its standard error with `<id>`, and what comes before a
   * mark is that command's output, passed on as it comes. A shell that ends (a command `exec`ed
   * something that exited, the devbox stopped) completes nothing: its pending executions stay
   * running, as the shell that would report them is gone.
   */
  private namedShell(devbox: Devbox, name: string): NamedShell {
    const spawned = devbox.spawner.start({ argv: ["sh"], user: String(devbox.uid), stdin: true })
    const { stdout, stderr } = spawned
    const shell: NamedShell = { write: (line) => void spawned.stdin!.write(line), pending: new Map() }
    devbox.shells.set(name, shell)
    void spawned.exit.then(() => devbox.shells.get(name) === shell && devbox.shells.delete(name))
    // Each stream's output goes to the first command whose mark has not come on it yet.
    const running = (channel: Channel) =>
      [...shell.pending.values()].find((p) => channel === "stdout" ? p.exitStatus === undefined : !p.stderrEnded)
    const marked = (id: string, mark: (pending: Pending) => void) => {
      const pending = shell.pending.get(id)
      if (pending === undefined) return
      mark(pending)
      if (pending.exitStatus === undefined || !pending.stderrEnded) return
      shell.pending.delete(id)
      pending.end(pending.exitStatus)
    }
    const output = (channel: Channel, onMark: (line: string) => void) =>
      markedOutput(MARK, (text) => {
        const pending = running(channel)
        if (pending !== undefined) pending.execution[channel] += text
      }, onMark)
    this.follow(
      stdout,
      output("stdout", (line) => {
        const [id = "", status] = line.split(" ")
        marked(id, (pending) => pending.exitStatus = Number(status))
      })
    )
    this.follow(stderr, output("stderr", (id) => marked(id, (pending) => pending.stderrEnded = true)))
    return shell
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
