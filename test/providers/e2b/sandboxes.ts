/**
 * E2B's REST control plane (spec/openapi.yml) over Docker: a sandbox is a container of its
 * template's image, labelled with the stand-in's instance. `POST /v2/sandboxes` (201) creates one
 * with its `timeout` (seconds; at its end the sandbox is killed, as E2B does), `metadata` and
 * `envVars`; `GET /v2/sandboxes` lists with the `metadata` filter (`k=v&...`, URL-encoded) and
 * `state`; `GET/DELETE /sandboxes/{id}`; `POST /sandboxes/{id}/timeout` restarts the clock;
 * `POST /sandboxes/{id}/pause` is `docker pause` (memory kept; the clock stops; every connection
 * into the sandbox cut); `POST /v2/sandboxes/{id}/connect` resumes a paused one (201) or answers
 * for a running one (200).
 *
 * The rules E2B's API enforces (e2b-dev/infra, packages/api), kept here:
 * - A sandbox's life is capped from its start (and from each resume, which starts it anew) at the
 *   team's `MaxLengthHours` (1 h Hobby, 24 h Pro; `maxLengthSeconds` here): a create or connect
 *   asking a longer timeout is a 400, a renewal is clamped to what is left (`getMaxAllowedTTL`),
 *   and one past the cap is a 400 "Max instance length exceeded" (`KeepAliveFor`).
 * - States in transition (`pausing`, `snapshotting`, `killing`; `transition` puts a sandbox in one
 *   until a promise settles): pause answers 409 "cannot be paused while in '<state>' state" (the
 *   SDK reads any 409 as "already paused"), a renewal 409; `GET` shows `pausing` as paused,
 *   `snapshotting` as running and `killing` as not found (`sandbox_get.go`).
 */
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { Spawner } from "../spawner.ts"
import { pauseContainer } from "../standin.ts"
import { docker, removeContainer, STANDIN_LABEL } from "./docker.ts"
import type { StartRequest } from "./process.ts"
import { type Remembered, type SnapshotTemplate, SnapshotTemplates } from "./snapshotTemplates.ts"

/** What a template id stands for here: an image on the engine and the VM's size. */
export interface StandinTemplate {
  readonly image: string
  readonly cpuCount?: number
  readonly memoryMB?: number
  /** The user commands run as when the SDK names none (E2B's templates: `user`). */
  readonly user?: string
}

export interface Sandbox {
  readonly sandboxID: string
  readonly templateID: string
  readonly template: StandinTemplate
  readonly container: string
  /** What starts its processes (envd's part): spawner.ts. */
  readonly spawner: Spawner
  ip: string
  readonly metadata: Readonly<Record<string, string>>
  readonly envdAccessToken: string
  /** When its life began: its create, or its last resume (E2B makes the VM anew from the snapshot). */
  startedAt: Date
  endAt: Date
  state: SandboxState
  timer: ReturnType<typeof setTimeout> | undefined
  readonly processes: Map<number, StartRequest>
  readonly allowInternetAccess: boolean | undefined
  readonly network: SandboxNetwork | undefined
  /** Paused keeping no memory (`memory: false`): its container stopped, a connect boots it anew. */
  diskOnly: boolean
  /** Made from a snapshot: the source's processes it ran again at once (E2B's memory, as the stand-in stands for it). */
  readonly restored: ReadonlyArray<string>
}

/** E2B's sandbox states (sandboxtypes/states.go), `paused` being a snapshot's. */
export type SandboxState = "running" | "paused" | "pausing" | "snapshotting" | "killing"

/** A state a sandbox passes through on its way to another. */
export type TransitionState = "pausing" | "snapshotting" | "killing"

/** The envd version the stand-in answers for (what the SDK checks features against). */
export const ENVD_VERSION = "0.5.7"
const DEFAULT_TIMEOUT_SECONDS = 300
/** The Hobby plan's cap, E2B's default team's. */
export const DEFAULT_MAX_LENGTH_SECONDS = 3600

/** E2B's words for the cap, in hours (the stand-in's small caps in seconds). */
const capText = (seconds: number) => seconds % 3600 === 0 ? `${seconds / 3600} hours` : `${seconds} seconds`

/** `utils.SandboxChangingStateMsg`. */
const changingState = (id: string, state: SandboxState) =>
  state === "killing"
    ? `Sandbox "${id}" is being killed`
    : state === "pausing"
    ? `Sandbox "${id}" is being paused`
    : `Sandbox "${id}" is being snapshotted`

export const apiError = (response: ServerResponse, code: number, message: string) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify({ code, message }))
}

export const json = (response: ServerResponse, code: number, body: unknown) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

export interface NewSandbox {
  readonly templateID?: string
  readonly timeout?: number
  readonly metadata?: Record<string, string>
  readonly envVars?: Record<string, string>
  readonly allow_internet_access?: boolean
  readonly network?: SandboxNetwork
}

/** The egress part of a create (stored and shown, not enforced: the container keeps the engine's network). */
export interface SandboxNetwork {
  readonly allowOut?: ReadonlyArray<string>
  readonly denyOut?: ReadonlyArray<string>
  /** Per-domain transforms (headers E2B's egress proxy sets on requests to the domain). */
  readonly rules?: Readonly<
    Record<string, ReadonlyArray<{ readonly transform?: { readonly headers?: Readonly<Record<string, string>> } }>>
  >
}

/** An allowOut/denyOut entry E2B takes: an IPv4 address or block, or a host name. */
const EGRESS_ENTRY =
  /^(\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/

export class Sandboxes {
  readonly byId = new Map<string, Sandbox>()

  readonly instance: string
  readonly templates: Readonly<Record<string, StandinTemplate>>
  readonly snapshots: SnapshotTemplates
  /** The team's cap on a sandbox's life, in seconds. */
  readonly maxLengthSeconds: number
  /** Cut every connection into a sandbox (its VM is snapshotted: TCP does not survive). */
  readonly cutConnections: (id: string) => void

  constructor(
    instance: string,
    templates: Readonly<Record<string, StandinTemplate>>,
    maxLengthSeconds: number,
    cutConnections: (id: string) => void
  ) {
    this.instance = instance
    this.templates = templates
    this.snapshots = new SnapshotTemplates(instance)
    this.maxLengthSeconds = maxLengthSeconds
    this.cutConnections = cutConnections
  }

  /** Kill at `timeout` seconds from now (E2B's server-side clean-up). */
  private clock(sandbox: Sandbox, timeout: number) {
    clearTimeout(sandbox.timer)
    sandbox.endAt = new Date(Date.now() + timeout * 1000)
    sandbox.timer = setTimeout(() => void this.kill(sandbox.sandboxID), timeout * 1000)
  }

  /** A requested timeout beyond the cap (create, connect): E2B's 400, else undefined. */
  private tooLong(timeout: number | undefined) {
    return timeout !== undefined && timeout > this.maxLengthSeconds
      ? `Timeout cannot be greater than ${capText(this.maxLengthSeconds)}`
      : undefined
  }

  /**
   * `KeepAliveFor`: the end moved to `timeout` seconds from now, clamped to what is left of the
   * sandbox's life; past the cap, "Max instance length exceeded". `allowShorter` off (a connect):
   * an end earlier than the current one is left as it is.
   */
  private keepAlive(sandbox: Sandbox, timeout: number, allowShorter: boolean): string | undefined {
    const lived = (Date.now() - sandbox.startedAt.getTime()) / 1000
    if (lived > this.maxLengthSeconds) return "Max instance length exceeded"
    const ttl = Math.max(0, Math.min(this.maxLengthSeconds - lived, timeout))
    if (allowShorter || Date.now() + ttl * 1000 >= sandbox.endAt.getTime()) this.clock(sandbox, ttl)
    return undefined
  }

  /**
   * Hold a sandbox in a transition until `until` settles, then finish it as E2B would: a snapshot
   * goes back to running, a pause ends paused, a kill removes the sandbox.
   */
  async transition(id: string, state: TransitionState, until: Promise<unknown>) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) throw new Error(`no sandbox ${id}`)
    sandbox.state = state
    await until.then(() => undefined, () => undefined)
    if (state === "killing") return void await this.kill(id)
    if (state === "pausing") return this.freeze(sandbox)
    sandbox.state = "running"
  }

  /**
   * The pause itself: the VM frozen, its clock stopped, its connections cut. Without memory
   * (`memory: false`) only the disk is kept: the container is stopped, every process ends.
   */
  private async freeze(sandbox: Sandbox, keepMemory = true) {
    sandbox.state = "pausing"
    clearTimeout(sandbox.timer)
    this.cutConnections(sandbox.sandboxID)
    try {
      if (keepMemory) await pauseContainer(sandbox.container)
      else await docker.getContainer(sandbox.container).stop({ t: 1 })
    } catch (error) {
      // Not left `pausing` for ever: running again, on its clock, and the pause answered 500.
      sandbox.state = "running"
      this.clock(sandbox, Math.max(0, (sandbox.endAt.getTime() - Date.now()) / 1000))
      throw error
    }
    sandbox.diskOnly = !keepMemory
    sandbox.state = "paused"
  }

  private view(sandbox: Sandbox) {
    return {
      sandboxID: sandbox.sandboxID,
      templateID: sandbox.templateID,
      clientID: "standin",
      startedAt: sandbox.startedAt.toISOString(),
      endAt: sandbox.endAt.toISOString(),
      cpuCount: sandbox.template.cpuCount ?? 2,
      memoryMB: sandbox.template.memoryMB ?? 512,
      diskSizeMB: 10240,
      metadata: sandbox.metadata,
      // A sandbox being paused is shown paused, one being snapshotted running (sandbox_get.go).
      state: sandbox.state === "paused" || sandbox.state === "pausing" ? "paused" : "running",
      envdVersion: ENVD_VERSION,
      allowInternetAccess: sandbox.allowInternetAccess ?? null,
      ...(sandbox.network === undefined ? {} : { network: sandbox.network })
    }
  }

  private connection(sandbox: Sandbox) {
    return {
      sandboxID: sandbox.sandboxID,
      templateID: sandbox.templateID,
      clientID: "standin",
      envdVersion: ENVD_VERSION,
      envdAccessToken: sandbox.envdAccessToken,
      trafficAccessToken: null,
      domain: null
    }
  }

  async create(body: NewSandbox, response: ServerResponse) {
    const templateID = body.templateID ?? ""
    const snapshot: SnapshotTemplate | undefined = this.snapshots.byId.get(templateID)
    const template: StandinTemplate | undefined = this.templates[templateID] ?? snapshot
    if (template === undefined) return apiError(response, 404, `template '${templateID}' not found`)
    const tooLong = this.tooLong(body.timeout)
    if (tooLong !== undefined) return apiError(response, 400, tooLong)
    const badEntry = [...(body.network?.allowOut ?? []), ...(body.network?.denyOut ?? [])].find((entry) =>
      !EGRESS_ENTRY.test(entry)
    )
    if (badEntry !== undefined) return apiError(response, 400, `invalid network rule "${badEntry}"`)
    const sandboxID = `i${randomBytes(10).toString("hex")}`
    const memoryMB = template.memoryMB ?? 512
    const spawner = new Spawner()
    const container = await docker.createContainer({
      name: `e2b-standin-${this.instance}-${sandboxID}`,
      Image: template.image,
      // envd is the VM's long-running process; here the spawner's loop stands for its process service.
      Entrypoint: spawner.entrypoint,
      Cmd: [],
      User: "root",
      Env: Object.entries(body.envVars ?? {}).map(([k, v]) => `${k}=${v}`),
      Labels: { [STANDIN_LABEL]: this.instance, [`${STANDIN_LABEL}.sandbox`]: sandboxID },
      HostConfig: {
        Init: true,
        Binds: [spawner.bind],
        Memory: memoryMB * 1024 * 1024,
        NanoCpus: (template.cpuCount ?? 2) * 1e9
      }
    })
    await container.start()
    const inspected = await container.inspect()
    // A snapshot's memory: what ran in its source runs again, already running when the create
    // answers (a restored VM's processes are), so a pause right after it finds them to end: a
    // request still queued for the spawner's loop would be read by the loop of a cold boot.
    const restored: ReadonlyArray<Remembered> = snapshot?.memory ?? []
    await Promise.all(restored.map(({ user, args }) => {
      // Detached, as envd leaves a process whose client went away: its output is read and dropped.
      const spawned = spawner.start({ argv: ["/bin/sh", "-c", args], user })
      for (const output of [spawned.stdout, spawned.stderr]) output.resume()
      return spawned.pid.catch(() => undefined)
    }))
    const sandbox: Sandbox = {
      sandboxID,
      templateID,
      template,
      container: container.id,
      spawner,
      ip: Object.values(inspected.NetworkSettings.Networks)[0]?.IPAddress ?? "",
      metadata: body.metadata ?? {},
      envdAccessToken: randomBytes(16).toString("hex"),
      startedAt: new Date(),
      endAt: new Date(),
      state: "running",
      timer: undefined,
      processes: new Map(),
      allowInternetAccess: body.allow_internet_access,
      network: body.network,
      diskOnly: false,
      restored: restored.map(({ args }) => args)
    }
    this.byId.set(sandboxID, sandbox)
    this.clock(sandbox, Math.min(body.timeout ?? DEFAULT_TIMEOUT_SECONDS, this.maxLengthSeconds))
    json(response, 201, this.connection(sandbox))
  }

  list(query: URLSearchParams, response: ServerResponse) {
    const wanted = [...new URLSearchParams(query.get("metadata") ?? "")].map(([k, v]) =>
      [decodeURIComponent(k), decodeURIComponent(v)] as const
    )
    const states = (query.get("state") ?? "running,paused").split(",")
    json(
      response,
      200,
      [...this.byId.values()]
        .filter((s) => s.state !== "killing" && wanted.every(([k, v]) => s.metadata[k] === v))
        .map((s) => this.view(s))
        .filter((view) => states.includes(view.state))
    )
  }

  get(id: string, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    return sandbox === undefined || sandbox.state === "killing"
      ? apiError(response, 404, `sandbox "${id}" not found`)
      : json(response, 200, this.view(sandbox))
  }

  /** Remove a sandbox and its container; false when there is none. */
  async kill(id: string): Promise<boolean> {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return false
    this.byId.delete(id)
    clearTimeout(sandbox.timer)
    await removeContainer(sandbox.container)
    sandbox.spawner.close()
    return true
  }

  setTimeout(id: string, body: { readonly timeout?: number }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return apiError(response, 404, `sandbox "${id}" not found`)
    if (sandbox.state === "paused") return response.writeHead(204).end()
    if (sandbox.state !== "running") return apiError(response, 409, changingState(id, sandbox.state))
    const refused = this.keepAlive(sandbox, body.timeout ?? DEFAULT_TIMEOUT_SECONDS, true)
    if (refused !== undefined) return apiError(response, 400, refused)
    response.writeHead(204).end()
  }

  async pause(id: string, body: { readonly memory?: boolean }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return apiError(response, 404, `sandbox "${id}" not found`)
    if (sandbox.state === "paused") {
      return apiError(response, 409, `Error pausing sandbox - sandbox '${id}' is already paused`)
    }
    if (sandbox.state !== "running") {
      return apiError(response, 409, `Sandbox '${id}' cannot be paused while in '${sandbox.state}' state`)
    }
    await this.freeze(sandbox, body.memory !== false)
    response.writeHead(204).end()
  }

  /**
   * A snapshot of a running sandbox: `snapshotting` (a pause or renewal meanwhile is E2B's 409) while
   * its container is committed, then running again, its processes and connections as they were.
   */
  async snapshot(id: string, body: { readonly name?: string }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined || sandbox.state === "killing") {
      return apiError(response, 404, `sandbox "${id}" not found`)
    }
    if (sandbox.state !== "running") return apiError(response, 409, changingState(id, sandbox.state))
    sandbox.state = "snapshotting"
    const snapshot = await this.snapshots.take(sandbox, body.name).finally(() => sandbox.state = "running")
    json(response, 201, { snapshotID: snapshot.snapshotID, names: [snapshot.snapshotID] })
  }

  async connect(id: string, body: { readonly timeout?: number }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined || sandbox.state === "killing") {
      return apiError(response, 404, `sandbox "${id}" not found`)
    }
    const tooLong = this.tooLong(body.timeout)
    if (tooLong !== undefined) return apiError(response, 400, tooLong)
    if (sandbox.state !== "running" && sandbox.state !== "paused") {
      return apiError(response, 409, changingState(id, sandbox.state))
    }
    const timeout = body.timeout ?? DEFAULT_TIMEOUT_SECONDS
    if (sandbox.state === "paused") {
      const container = docker.getContainer(sandbox.container)
      if (!sandbox.diskOnly) await container.unpause()
      else {
        // A cold boot from the disk: nothing of the memory comes back (its address may change).
        await container.start()
        sandbox.ip = Object.values((await container.inspect()).NetworkSettings.Networks)[0]?.IPAddress ?? ""
        sandbox.diskOnly = false
      }
      // A resume is a new start: the cap counts from it.
      sandbox.state = "running"
      sandbox.startedAt = new Date()
      this.clock(sandbox, Math.min(timeout, this.maxLengthSeconds))
      return json(response, 201, this.connection(sandbox))
    }
    const refused = this.keepAlive(sandbox, timeout, false)
    if (refused !== undefined) return apiError(response, 400, refused)
    json(response, 200, this.connection(sandbox))
  }
}
