/**
 * E2B's REST control plane (spec/openapi.yml) over Docker: a sandbox is a container of its
 * template's image, labelled with the stand-in's instance. `POST /v2/sandboxes` (201) creates one
 * with its `timeout` (seconds; at its end the sandbox is killed, as E2B does), `metadata` and
 * `envVars`; `GET /v2/sandboxes` lists with the `metadata` filter (`k=v&...`, URL-encoded) and
 * `state`; `GET/DELETE /sandboxes/{id}`; `POST /sandboxes/{id}/timeout` restarts the clock;
 * `POST /sandboxes/{id}/pause` is `docker pause` (memory kept; the clock stops; 409 when paused);
 * `POST /v2/sandboxes/{id}/connect` resumes a paused one (201) or answers for a running one (200).
 */
import { randomBytes } from "node:crypto"
import type { ServerResponse } from "node:http"
import { docker, removeContainer, STANDIN_LABEL } from "./docker.ts"
import type { StartRequest } from "./process.ts"

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
  readonly ip: string
  readonly metadata: Readonly<Record<string, string>>
  readonly envdAccessToken: string
  readonly startedAt: Date
  endAt: Date
  state: "running" | "paused"
  timer: ReturnType<typeof setTimeout> | undefined
  readonly processes: Map<number, StartRequest>
}

/** The envd version the stand-in answers for (what the SDK checks features against). */
export const ENVD_VERSION = "0.5.7"
const DEFAULT_TIMEOUT_SECONDS = 300

export const apiError = (response: ServerResponse, code: number, message: string) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify({ code, message }))
}

const json = (response: ServerResponse, code: number, body: unknown) => {
  response.writeHead(code, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

export interface NewSandbox {
  readonly templateID?: string
  readonly timeout?: number
  readonly metadata?: Record<string, string>
  readonly envVars?: Record<string, string>
}

export class Sandboxes {
  readonly byId = new Map<string, Sandbox>()

  readonly instance: string
  readonly templates: Readonly<Record<string, StandinTemplate>>

  constructor(instance: string, templates: Readonly<Record<string, StandinTemplate>>) {
    this.instance = instance
    this.templates = templates
  }

  /** Kill at `timeout` seconds from now (E2B's server-side clean-up). */
  private clock(sandbox: Sandbox, timeout: number) {
    clearTimeout(sandbox.timer)
    sandbox.endAt = new Date(Date.now() + timeout * 1000)
    sandbox.timer = setTimeout(() => void this.kill(sandbox.sandboxID), timeout * 1000)
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
      state: sandbox.state,
      envdVersion: ENVD_VERSION
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
    const template = this.templates[templateID]
    if (template === undefined) return apiError(response, 404, `template '${templateID}' not found`)
    const sandboxID = `i${randomBytes(10).toString("hex")}`
    const memoryMB = template.memoryMB ?? 512
    const container = await docker.createContainer({
      name: `e2b-standin-${this.instance}-${sandboxID}`,
      Image: template.image,
      // envd is the VM's long-running process; here nothing runs until the SDK starts it.
      Entrypoint: ["/bin/sh", "-c", "exec sleep infinity"],
      Cmd: [],
      User: "root",
      Env: Object.entries(body.envVars ?? {}).map(([k, v]) => `${k}=${v}`),
      Labels: { [STANDIN_LABEL]: this.instance, [`${STANDIN_LABEL}.sandbox`]: sandboxID },
      HostConfig: {
        Init: true,
        Memory: memoryMB * 1024 * 1024,
        NanoCpus: (template.cpuCount ?? 2) * 1e9
      }
    })
    await container.start()
    const inspected = await container.inspect()
    const sandbox: Sandbox = {
      sandboxID,
      templateID,
      template,
      container: container.id,
      ip: Object.values(inspected.NetworkSettings.Networks)[0]?.IPAddress ?? "",
      metadata: body.metadata ?? {},
      envdAccessToken: randomBytes(16).toString("hex"),
      startedAt: new Date(),
      endAt: new Date(),
      state: "running",
      timer: undefined,
      processes: new Map()
    }
    this.byId.set(sandboxID, sandbox)
    this.clock(sandbox, body.timeout ?? DEFAULT_TIMEOUT_SECONDS)
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
        .filter((s) => states.includes(s.state) && wanted.every(([k, v]) => s.metadata[k] === v))
        .map((s) => this.view(s))
    )
  }

  get(id: string, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    return sandbox === undefined
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
    return true
  }

  setTimeout(id: string, body: { readonly timeout?: number }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return apiError(response, 404, `sandbox "${id}" not found`)
    if (sandbox.state === "running") this.clock(sandbox, body.timeout ?? DEFAULT_TIMEOUT_SECONDS)
    response.writeHead(204).end()
  }

  async pause(id: string, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return apiError(response, 404, `sandbox "${id}" not found`)
    if (sandbox.state === "paused") return apiError(response, 409, `sandbox "${id}" is already paused`)
    await docker.getContainer(sandbox.container).pause()
    sandbox.state = "paused"
    clearTimeout(sandbox.timer)
    response.writeHead(204).end()
  }

  async connect(id: string, body: { readonly timeout?: number }, response: ServerResponse) {
    const sandbox = this.byId.get(id)
    if (sandbox === undefined) return apiError(response, 404, `sandbox "${id}" not found`)
    const resumed = sandbox.state === "paused"
    if (resumed) await docker.getContainer(sandbox.container).unpause()
    sandbox.state = "running"
    this.clock(sandbox, body.timeout ?? DEFAULT_TIMEOUT_SECONDS)
    json(response, resumed ? 201 : 200, this.connection(sandbox))
  }
}
