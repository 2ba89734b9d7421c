/**
 * The Daytona stand-in: an HTTP server on 127.0.0.1 speaking Daytona's REST API as
 * `@daytonaio/sdk` 0.218 sends it (the control plane under `/api`, the toolbox under `/toolbox`,
 * preview links under `/preview`), each sandbox a Docker container (sandboxes.ts). Tests reach it
 * only through the SDK, with its `apiUrl` option. See README.md.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import type { SeenRequest } from "../aliveAttempts.ts"
import { applyHttpFault, Faults } from "../faults.ts"
import {
  json,
  type ProxyTarget,
  proxyTo,
  proxyUpgradeTo,
  readJson,
  refuseUpgrade,
  upgradedSockets
} from "../standin.ts"
import { eventGateway } from "./events.ts"
import { ApiError, type CreateBody, removeAll, Sandboxes, type Snapshot, type StandInSandbox } from "./sandboxes.ts"
import { SignedPreviews } from "./signedPreviews.ts"
import { snapshotDto } from "./snapshotStore.ts"
import { Toolbox } from "./toolbox.ts"

/** A request as the stand-in recorded it (for assertions on what the SDK sent). */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

export interface StandInOptions {
  /** Snapshot name -> local Docker image, and its sandbox class (default `container`). */
  readonly snapshots: Readonly<Record<string, Snapshot>>
}

export interface DaytonaStandIn {
  /** The `apiUrl` to give the SDK. */
  readonly apiUrl: string
  /** The only API key it accepts. */
  readonly apiKey: string
  readonly instance: string
  readonly requests: Array<RecordedRequest>
  /** How many commands' logs are followed now (the toolbox's open WebSockets). */
  readonly following: () => number
  /** The paths the preview proxy was asked for (`/preview/{port}-{id}/alive` ...), in order. */
  readonly previews: Array<SeenRequest>
  readonly sandboxes: Sandboxes
  /** The signed preview URLs' tokens Daytona gave out. */
  readonly signedPreviews: SignedPreviews
  /**
   * The faults the next requests meet (test/providers/faults.ts), matched on the method and the
   * path as the client sent it (`/api/sandbox`, `/toolbox/{id}/...`, `/preview/...`).
   */
  readonly faults: Faults
  readonly close: () => Promise<void>
}

/** Daytona's error body (NestJS's): `{ statusCode, message, error }`. */
const errorBody = (status: number, message: string) => ({ statusCode: status, message, error: String(status) })

const fail = (response: ServerResponse, error: ApiError) =>
  json(response, error.status, errorBody(error.status, error.message))

/** Daytona's `Sandbox` DTO (the fields the SDK reads); the toolbox proxy URL comes from its own endpoint. */
const dto = (sandbox: StandInSandbox) => ({
  id: sandbox.id,
  name: sandbox.name,
  organizationId: "standin-org",
  snapshot: sandbox.snapshot,
  user: sandbox.user,
  env: sandbox.env,
  labels: sandbox.labels,
  public: false,
  networkBlockAll: sandbox.networkBlockAll,
  ...(sandbox.networkAllowList === undefined ? {} : { networkAllowList: sandbox.networkAllowList }),
  target: "us",
  cpu: sandbox.cpu,
  gpu: 0,
  memory: sandbox.memory,
  disk: sandbox.disk,
  state: sandbox.state,
  desiredState: sandbox.desiredState,
  ...(sandbox.errorReason === undefined ? {} : { errorReason: sandbox.errorReason }),
  sandboxClass: sandbox.sandboxClass,
  autoStopInterval: sandbox.autoStopInterval,
  autoArchiveInterval: 10080,
  autoDeleteInterval: sandbox.autoDeleteInterval,
  createdAt: sandbox.createdAt,
  updatedAt: new Date().toISOString()
})

/** Start a stand-in on a free port of 127.0.0.1; `close()` stops it and removes every container it made. */
export const startStandIn = async (options: StandInOptions): Promise<DaytonaStandIn> => {
  const instance = randomBytes(4).toString("hex")
  const apiKey = `dtn_${randomBytes(16).toString("hex")}`
  const sandboxes = new Sandboxes(instance, options.snapshots)
  const events = eventGateway(apiKey)
  sandboxes.onState = (sandbox, oldState) =>
    events.emit("sandbox.state.updated", { sandbox: dto(sandbox), oldState, newState: sandbox.state })
  const signedPreviews = new SignedPreviews()
  const toolbox = new Toolbox()
  const requests: Array<RecordedRequest> = []
  const previews: Array<SeenRequest> = []
  const faults = new Faults()
  let base = ""

  const control = async (method: string, path: string, url: URL, request: IncomingMessage) => {
    const body = method === "POST" || method === "PUT" ? await readJson(request) : undefined
    requests.push({ method, path, body })
    // State changes are answered at once and done in the background, as Daytona's runners do them.
    const answer = (sandbox: StandInSandbox, done: Promise<void>) => {
      done.catch(() => undefined)
      return { status: 200, body: dto(sandbox) }
    }
    if (method === "POST" && path === "/sandbox") {
      const { sandbox, done } = sandboxes.begin(body as CreateBody)
      return answer(sandbox, done)
    }
    if (method === "GET" && path === "/sandbox") {
      const labels = JSON.parse(url.searchParams.get("labels") ?? "{}") as Record<string, string>
      const items = sandboxes.list(labels).map(dto)
      return { status: 200, body: { items, total: items.length, nextCursor: null } }
    }
    if (method === "GET" && path === "/snapshots") {
      const page = Number(url.searchParams.get("page") ?? 1)
      return { status: 200, body: sandboxes.snapshots.page(page, Number(url.searchParams.get("limit") ?? 10)) }
    }
    const snapshotPath = /^\/snapshots\/([^/]+)$/.exec(path)
    if (snapshotPath !== null) {
      const idOrName = decodeURIComponent(snapshotPath[1]!)
      const snapshot = sandboxes.snapshots.find(idOrName)
      if (snapshot === undefined) throw new ApiError(404, `Snapshot ${idOrName} not found`)
      if (method === "GET") return { status: 200, body: snapshotDto(snapshot) }
      if (method === "DELETE") {
        sandboxes.snapshots.remove(snapshot, sandboxes.hold)
        return { status: 200, body: "" }
      }
    }
    const match = /^\/sandbox\/([^/]+)(?:\/(.*))?$/.exec(path)
    if (match === null) return undefined
    const sandbox = sandboxes.get(decodeURIComponent(match[1]!))
    const action = match[2] ?? ""
    if (method === "GET" && action === "") return { status: 200, body: dto(sandbox) }
    if (method === "DELETE" && action === "") return answer(sandbox, sandboxes.destroy(sandbox))
    if (method === "POST" && action === "start") return answer(sandbox, sandboxes.start(sandbox))
    if (method === "POST" && action === "stop") return answer(sandbox, sandboxes.stop(sandbox))
    if (method === "POST" && action === "pause") return answer(sandbox, sandboxes.pause(sandbox))
    if (method === "POST" && action === "snapshot") {
      return answer(sandbox, sandboxes.snapshot(sandbox, body as { name?: string; includeMemory?: boolean }))
    }
    if (method === "PUT" && action === "labels") {
      sandbox.labels = (body as { labels: Record<string, string> }).labels
      return { status: 200, body: { labels: sandbox.labels } }
    }
    if (method === "POST" && action === "last-activity") return { status: 201, body: "" }
    if (method === "GET" && action === "toolbox-proxy-url") return { status: 200, body: { url: `${base}/toolbox` } }
    const port = /^ports\/(\d+)\/preview-url$/.exec(action)
    if (method === "GET" && port !== null) {
      return {
        status: 200,
        body: { sandboxId: sandbox.id, url: `${base}/preview/${port[1]}-${sandbox.id}`, token: sandbox.previewToken }
      }
    }
    const signed = /^ports\/(\d+)\/signed-preview-url$/.exec(action)
    if (method === "GET" && signed !== null) {
      const link = signedPreviews.sign(sandbox, Number(signed[1]), url.searchParams.get("expiresInSeconds"))
      return { status: 200, body: { ...link, url: `${base}/preview/${link.port}-${link.token}` } }
    }
    return undefined
  }

  /**
   * The preview proxy's target for `/preview/{port}-{sandboxId | signed token}/...`: a sandbox id
   * with the `x-daytona-preview-token` header, or a signed token valid for that port; the sandbox
   * started.
   */
  const previewTarget = async (request: IncomingMessage, url: URL): Promise<ProxyTarget> => {
    const match = /^\/preview\/(\d+)-([0-9a-f-]{36}|[0-9a-z]{16})(\/.*)?$/.exec(url.pathname)
    if (match === null) throw new ApiError(404, "Preview not found")
    const [, port = "", idOrToken = "", path = "/"] = match
    const sandbox = idOrToken.length === 16
      ? sandboxes.get(signedPreviews.sandboxOf(idOrToken, Number(port)))
      : sandboxes.get(idOrToken)
    if (idOrToken === sandbox.id && request.headers["x-daytona-preview-token"] !== sandbox.previewToken) {
      throw new ApiError(401, "Unauthorized: missing or invalid preview token")
    }
    if (sandbox.state !== "started") throw new ApiError(502, `Sandbox ${sandbox.id} is not running`)
    return {
      host: await sandboxes.address(sandbox),
      port: Number(port),
      path: `${path}${url.search}`,
      dropHeader: "x-daytona-preview-token",
      prefix: `/preview/${port}-${idOrToken}`
    }
  }

  /** The preview proxy: HTTP to the target (a client that hangs up hangs up on the server too). */
  const preview = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    previews.push({ path: url.pathname, at: Date.now() })
    const target = await previewTarget(request, url)
    proxyTo(
      request,
      response,
      target,
      () => fail(response, new ApiError(502, "Bad Gateway: nothing answers on that port"))
    )
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", base)
    const method = request.method ?? "GET"
    const handle = async () => {
      const fault = faults.take(method, url.pathname)
      if (fault !== undefined && await applyHttpFault(fault, request, response, errorBody)) return
      if (url.pathname.startsWith("/preview/")) return preview(request, response, url)
      if (request.headers.authorization !== `Bearer ${apiKey}`) throw new ApiError(401, "Invalid API key")
      if (url.pathname.startsWith("/api/")) {
        const answer = await control(method, url.pathname.slice("/api".length), url, request)
        if (answer === undefined) throw new ApiError(404, `Cannot ${method} ${url.pathname}`)
        return json(response, answer.status, answer.body)
      }
      const tool = /^\/toolbox\/([^/]+)(\/.*)$/.exec(url.pathname)
      if (tool !== null) {
        const sandbox = sandboxes.get(tool[1]!)
        const rest = tool[2]!
        const body = () =>
          readJson(request).then((parsed) => {
            requests.push({ method, path: `/toolbox/{id}${rest}`, body: parsed })
            return parsed
          })
        if (rest === "/files/bulk-upload") requests.push({ method, path: `/toolbox/{id}${rest}`, body: undefined })
        const answer = await toolbox.handle(sandbox, method, rest, request, body)
        if (answer !== undefined) return json(response, answer.status, answer.body)
      }
      throw new ApiError(404, `Cannot ${method} ${url.pathname}`)
    }
    handle().catch((error: unknown) =>
      fail(response, error instanceof ApiError ? error : new ApiError(500, String((error as Error).message ?? error)))
    )
  })
  // WebSockets through the preview proxy, as Daytona's carries them (VS Code's workbench needs them).
  const upgraded = upgradedSockets(server)
  /** The toolbox's WebSocket (a command's logs, followed), behind the API key and the fault plan. */
  const toolboxUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => {
    // The fault plan's answers as an upgrade meets them: a status refuses it, a cut hangs up.
    const fault = faults.take("GET", url.pathname)
    if (fault?.kind === "status") throw new ApiError(fault.status, fault.message)
    if (fault?.kind === "cut") return void socket.destroy()
    if (fault?.kind === "delay") await new Promise((resolve) => setTimeout(resolve, fault.millis))
    if (fault?.kind === "hold") await fault.until.then(() => undefined, () => undefined)
    if (request.headers.authorization !== `Bearer ${apiKey}`) throw new ApiError(401, "Invalid API key")
    const tool = /^\/toolbox\/([^/]+)(\/.*)$/.exec(url.pathname)
    const sandbox = sandboxes.get(tool?.[1] ?? "")
    const rest = tool?.[2] ?? ""
    const follow = toolbox.followLogs(sandbox, rest, url)
    if (follow === undefined) throw new ApiError(404, `Cannot upgrade ${url.pathname}`)
    requests.push({ method: "GET", path: `/toolbox/{id}${rest}${url.search}`, body: undefined })
    follow(request, socket, head)
  }

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", base)
    if (url.pathname === "/api/socket.io/") return events.upgrade(request, socket, head)
    const refuse = (error: unknown) =>
      refuseUpgrade(socket, error instanceof ApiError ? error : new ApiError(500, String(error)))
    if (url.pathname.startsWith("/toolbox/")) return void toolboxUpgrade(request, socket, head, url).catch(refuse)
    const target = url.pathname.startsWith("/preview/")
      ? previewTarget(request, url)
      : Promise.reject(new ApiError(404, `Cannot upgrade ${url.pathname}`))
    target.then((found) => proxyUpgradeTo(request, socket, head, found), refuse)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    apiUrl: `${base}/api`,
    apiKey,
    instance,
    requests,
    previews,
    following: () => toolbox.following(),
    sandboxes,
    signedPreviews,
    faults,
    close: async () => {
      events.close()
      toolbox.close()
      for (const socket of upgraded) socket.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await removeAll(instance)
      for (const sandbox of sandboxes.byId.values()) sandbox.spawner.close()
      await sandboxes.snapshots.removeImages()
    }
  }
}

/** The stand-in as a scoped resource: closed (containers removed) with the scope. */
export const standIn = (options: StandInOptions) =>
  Effect.acquireRelease(Effect.promise(() => startStandIn(options)), (s) => Effect.promise(() => s.close()))
