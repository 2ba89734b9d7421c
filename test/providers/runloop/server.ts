/**
 * The Runloop stand-in: Runloop's REST API as `@runloop/api-client` 1.32 sends it, over HTTP/2
 * without TLS (the SDK's default transport on Node is `node:http2`, which speaks h2c with prior
 * knowledge to an `http://` base URL), each devbox a Docker container (devboxes.ts); and the
 * devboxes' tunnels, an HTTP/1.1 server of its own (what the action client speaks). Tests reach
 * the API only through the SDK, with its `baseURL` option. See README.md.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session
} from "node:http2"
import type { AddressInfo, Socket } from "node:net"
import { posix } from "node:path"
import { Readable } from "node:stream"
import { applyHttpFault, Faults } from "../faults.ts"
import { json, proxyTo, proxyUpgradeTo, readJson, refuseUpgrade, upgradedSockets } from "../standin.ts"
import { ApiError, type CreateBody, type Devbox, Devboxes, type Execution, newTunnel, removeAll } from "./devboxes.ts"
import { DiskSnapshots } from "./diskSnapshots.ts"
import { parseOffset, streamOutput } from "./executionStream.ts"

/** A request as the stand-in recorded it (for assertions on what the SDK sent). */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** Its query string (`?offset=0`), or "". */
  readonly query: string
  readonly body: unknown
  /** The HTTP version it came over ("2.0": the SDK's HTTP/2 transport). */
  readonly httpVersion: string
  /** When it arrived (ms since the epoch). */
  readonly at: number
}

export interface StandInOptions {
  /** Blueprint name -> local Docker image. */
  readonly blueprints: Readonly<Record<string, string>>
  /**
   * How long `wait_for_status` holds before its 408, and an execution's output stream waits for new
   * output before its 408 (Runloop: about 30 s; tests shorten it).
   */
  readonly holdMs?: number
}

/** A request that came through a tunnel (to the action server, or another port). */
export interface TunnelRequest {
  readonly method: string
  /** As sent to the tunnel server: `/{port}-{tunnelKey}/alive`, ... */
  readonly url: string
  readonly at: number
}

export interface RunloopStandIn {
  /** The `baseURL` to give the SDK (`baseUrl` of RunloopRuntime). */
  readonly baseUrl: string
  /** The only API key it accepts. */
  readonly apiKey: string
  readonly instance: string
  readonly requests: Array<RecordedRequest>
  /** The requests that came through the tunnels, with their arrival time. */
  readonly tunnelRequests: Array<TunnelRequest>
  readonly devboxes: Devboxes
  /** RunloopRuntime's `tunnelUrl`: a tunnel port's URL on the stand-in's tunnel server. */
  readonly tunnelUrl: (port: number, tunnelKey: string) => string
  /**
   * What the next matching API requests meet (test/providers/faults.ts), matched on the method and
   * the path (`/v1/devboxes`...). A status is Runloop's `{ message }` answer; a cut comes after the
   * request was served (the devbox made, the state changed) and before its answer, the worse case
   * for a client that sends it again.
   */
  readonly faults: Faults
  readonly close: () => Promise<void>
}

/** The header an authenticated tunnel's token comes in (`Bearer <auth_token>`). */
const TUNNEL_AUTH_HEADER = "x-runloop-tunnel-authorization"

/** A JSON answer, or an event stream the handler writes itself. */
type Answer =
  | { readonly status: number; readonly body: unknown }
  | { readonly events: (response: Http2ServerResponse) => Promise<void> }

const ok = (value: unknown): Answer => ({ status: 200, body: value })

/** `upload_file`'s multipart form (`path`, `file`), parsed by the platform's own `Request`. */
const readUpload = async (request: Http2ServerRequest): Promise<Record<string, unknown>> => {
  const headers = Object.entries(request.headers).filter((entry): entry is [string, string] =>
    !entry[0].startsWith(":") && typeof entry[1] === "string"
  )
  const form = await new Request("http://standin/", {
    method: "POST",
    headers,
    body: Readable.toWeb(request as unknown as Readable) as ReadableStream,
    duplex: "half"
  } as RequestInit).formData()
  const file = form.get("file") as File
  return { path: form.get("path"), file: Buffer.from(await file.arrayBuffer()) }
}

/** A handler's failure as Runloop answers it: an ApiError as thrown, anything else a 500. */
const apiFailure = (error: unknown) =>
  error instanceof ApiError ? error : new ApiError(500, String((error as Error).message ?? error))

/** Runloop's `DevboxView` (the fields the SDK and RunloopRuntime read). */
const view = (devbox: Devbox) => ({
  id: devbox.id,
  name: devbox.name,
  status: devbox.status,
  blueprint_id: `bpt_${devbox.blueprint}`,
  capabilities: [],
  create_time_ms: devbox.createTimeMs,
  end_time_ms: devbox.status === "shutdown" ? devbox.transitions.at(-1)?.transition_time_ms ?? null : null,
  launch_parameters: devbox.launchParameters,
  metadata: devbox.metadata,
  state_transitions: devbox.transitions,
  tunnel: devbox.tunnel,
  ...(devbox.shutdownReason === undefined ? {} : { shutdown_reason: devbox.shutdownReason })
})

/** Runloop's `DevboxAsyncExecutionDetailView`. */
const executionView = (execution: Execution) => ({
  devbox_id: execution.devboxId,
  execution_id: execution.id,
  status: execution.status,
  exit_status: execution.exitStatus,
  stdout: execution.stdout,
  stderr: execution.stderr
})

/** The named shell a command runs in (`shell_name`), if any. */
const shellOf = (body: Record<string, unknown>) =>
  typeof body["shell_name"] === "string" ? body["shell_name"] : undefined

/** Start a stand-in on free ports of 127.0.0.1; `close()` stops it and removes every container it made. */
export const startStandIn = async (options: StandInOptions): Promise<RunloopStandIn> => {
  const instance = randomBytes(4).toString("hex")
  const apiKey = `ak_${randomBytes(16).toString("hex")}`
  const holdMs = options.holdMs ?? 30_000
  const devboxes = new Devboxes(instance, options.blueprints)
  const snapshots = new DiskSnapshots(instance)
  const requests: Array<RecordedRequest> = []
  const tunnelRequests: Array<TunnelRequest> = []
  const faults = new Faults()
  /** Creates by the SDK's idempotency key (`x-request-id`): one sent again gets the devbox made the first time. */
  const created = new Map<string, Devbox>()

  /** `POST .../wait_for_status`: the state once it is one of `statuses`, else 408 after the hold. */
  const holdUntil = async <A>(check: () => A | undefined): Promise<Answer> => {
    const value = await devboxes.waitFor(check, holdMs)
    return value === undefined
      ? { status: 408, body: { message: "Timed out waiting for the requested status" } }
      : { status: 200, body: value }
  }

  const executionOf = (devbox: Devbox, id: string) => {
    const execution = devboxes.executions.get(id)
    if (execution === undefined || execution.devboxId !== devbox.id) {
      throw new ApiError(404, `Execution ${id} not found`)
    }
    return execution
  }

  const devboxAction = async (
    method: string,
    devbox: Devbox,
    action: string,
    body: Record<string, unknown>,
    query: URLSearchParams
  ): Promise<Answer | undefined> => {
    switch (`${method} ${action}`) {
      case "GET ":
        return ok(view(devbox))
      case "POST wait_for_status": {
        const statuses = body["statuses"] as Array<string>
        return holdUntil(() => statuses.includes(devbox.status) ? view(devbox) : undefined)
      }
      case "POST shutdown":
        await devboxes.shutdown(devbox)
        return ok(view(devbox))
      case "POST suspend":
        await devboxes.suspend(devbox)
        return ok(view(devbox))
      case "POST resume":
        await devboxes.resume(devbox)
        return ok(view(devbox))
      case "POST snapshot_disk":
        return ok(await snapshots.take(devbox, body))
      case "POST keep_alive":
        devbox.keepAlives++
        return ok({})
      case "POST enable_tunnel":
        devbox.tunnel ??= newTunnel(
          (body["auth_mode"] as "open" | "authenticated" | undefined) ?? "open",
          (body["http_keep_alive"] as boolean | undefined) ?? true
        )
        return ok(devbox.tunnel)
      case "POST upload_file": {
        // Relative to the user's home, into a directory that exists (Runloop writes the file, not its parents).
        const upload = body as unknown as { path: string; file: Buffer }
        await devboxes.writeFile(devbox, posix.resolve(devbox.home, upload.path), upload.file, 0o644)
        return ok({})
      }
      case "POST write_file_contents":
        await devboxes.writeFile(devbox, String(body["file_path"]), String(body["contents"]))
        return ok({ devbox_id: devbox.id, exit_status: 0, stdout: "", stderr: "" })
      case "POST execute_async":
        return ok(executionView(await devboxes.execute(devbox, String(body["command"]), undefined, shellOf(body))))
      case "POST execute": {
        // Waits up to `optimistic_timeout` (Runloop: at most 25 s), then answers "running" without killing it.
        const execution = await devboxes.execute(
          devbox,
          String(body["command"]),
          String(body["command_id"]),
          shellOf(body)
        )
        const waitMs = Math.min(Number(body["optimistic_timeout"] ?? 25), 25) * 1000
        await Promise.race([execution.done, new Promise((resolve) => setTimeout(resolve, waitMs))])
        return ok(executionView(execution))
      }
    }
    const stream = /^executions\/([^/]+)\/stream_(stdout|stderr)_updates$/.exec(action)
    if (method === "GET" && stream !== null) {
      const found = executionOf(devbox, stream[1]!)
      const from = parseOffset(query.get("offset"))
      const channel = stream[2] as "stdout" | "stderr"
      return { events: (response) => streamOutput(devboxes, found, channel, from, holdMs, response) }
    }
    const execution = /^executions\/([^/]+)(\/wait_for_status)?$/.exec(action)
    if (execution !== null) {
      const found = executionOf(devbox, execution[1]!)
      if (method === "GET" && execution[2] === undefined) return ok(executionView(found))
      if (method === "POST" && execution[2] !== undefined) {
        const statuses = body["statuses"] as Array<string>
        return holdUntil(() => statuses.includes(found.status) ? executionView(found) : undefined)
      }
    }
    return undefined
  }

  const api = async (
    method: string,
    url: URL,
    body: Record<string, unknown>,
    requestId: string | undefined
  ): Promise<Answer | undefined> => {
    const path = url.pathname
    if (method === "POST" && path === "/v1/devboxes") {
      const again = requestId === undefined ? undefined : created.get(requestId)
      const snapshotId = (body as CreateBody).snapshot_id
      const devbox = again ?? devboxes.create(body as CreateBody, snapshotId ? snapshots.get(snapshotId) : undefined)
      if (requestId !== undefined) created.set(requestId, devbox)
      return { status: 200, body: view(devbox) }
    }
    if (method === "GET" && path === "/v1/devboxes") {
      const all = devboxes.list(url.searchParams.get("status"))
      const after = url.searchParams.get("starting_after")
      const from = after === null ? 0 : all.findIndex((d) => d.id === after) + 1
      const limit = Number(url.searchParams.get("limit") ?? 20)
      const page = all.slice(from, from + limit)
      return {
        status: 200,
        body: { devboxes: page.map(view), has_more: from + limit < all.length, total_count: all.length }
      }
    }
    if (method === "GET" && path === "/v1/devboxes/disk_snapshots") {
      const listed = snapshots.list(url.searchParams)
      return { status: 200, body: { snapshots: listed, has_more: false, total_count: listed.length } }
    }
    const deleted = /^\/v1\/devboxes\/disk_snapshots\/([^/]+)\/delete$/.exec(path)
    if (method === "POST" && deleted !== null) {
      await snapshots.delete(deleted[1]!)
      return { status: 200, body: {} }
    }
    const match = /^\/v1\/devboxes\/([^/]+)(?:\/(.*))?$/.exec(path)
    if (match === null) return undefined
    return devboxAction(method, devboxes.get(match[1]!), match[2] ?? "", body, url.searchParams)
  }

  const sessions = new Set<Http2Session>()
  const server = createHttp2Server()
  server.on("session", (session) => {
    sessions.add(session)
    session.on("close", () => sessions.delete(session))
  })
  server.on("request", (request: Http2ServerRequest, response: Http2ServerResponse) => {
    const url = new URL(request.url, "http://standin")
    const method = request.method
    const handle = async () => {
      const multipart = String(request.headers["content-type"] ?? "").startsWith("multipart/form-data")
      const body = method !== "POST"
        ? {}
        : multipart
        ? await readUpload(request)
        : (await readJson(request)) as Record<string, unknown>
      requests.push({
        method,
        path: url.pathname,
        query: url.search,
        body,
        httpVersion: request.httpVersion,
        at: Date.now()
      })
      if (request.headers.authorization !== `Bearer ${apiKey}`) throw new ApiError(401, "Invalid API key")
      const fault = faults.take(method, url.pathname)
      const servedFirst = fault?.kind === "cut" && fault.unserved !== true
      if (fault !== undefined && !servedFirst && await applyHttpFault(fault, request, response)) return
      const requestId = request.headers["x-request-id"]
      const answer = await api(method, url, body, typeof requestId === "string" ? requestId : undefined)
      if (answer === undefined) throw new ApiError(404, `${method} ${url.pathname} is not served by the stand-in`)
      if (fault !== undefined && servedFirst) return void await applyHttpFault(fault, request, response)
      if ("events" in answer) return answer.events(response)
      json(response, answer.status, answer.body)
    }
    handle().catch((error: unknown) => {
      const failure = apiFailure(error)
      if (!response.headersSent && !response.destroyed) json(response, failure.status, { message: failure.message })
    })
  })

  /** Where a tunnel request goes: `/{port}-{tunnelKey}/...` to that port of the devbox's container, the token checked. */
  const tunnelTarget = async (request: IncomingMessage) => {
    const match = /^\/(\d+)-([0-9a-f]+)(\/.*)?$/.exec(request.url ?? "/")
    const devbox = match === null ? undefined : devboxes.byTunnelKey(match[2]!)
    if (match === null || devbox === undefined) throw new ApiError(404, "Tunnel not found")
    const token = devbox.tunnel?.auth_token
    if (token !== null && token !== undefined && request.headers[TUNNEL_AUTH_HEADER] !== `Bearer ${token}`) {
      throw new ApiError(401, "Tunnel authorization required")
    }
    const host = await devboxes.address(devbox).catch(() => {
      throw new ApiError(502, `Devbox ${devbox.id} is ${devbox.status}`)
    })
    return { host, port: Number(match[1]), path: match[3] ?? "/", dropHeader: TUNNEL_AUTH_HEADER }
  }

  /** The tunnels: requests and WebSockets (Runloop's tunnels carry both). */
  const tunnels = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
    tunnelRequests.push({ method: request.method ?? "GET", url: request.url ?? "/", at: Date.now() })
    tunnelTarget(request).then(
      (target) =>
        proxyTo(
          request,
          response,
          target,
          () => json(response, 502, { message: "Bad Gateway: nothing answers on that port" })
        ),
      (error: unknown) => json(response, apiFailure(error).status, { message: apiFailure(error).message })
    )
  })
  const upgraded = upgradedSockets(tunnels)
  tunnels.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    tunnelTarget(request).then(
      (target) => proxyUpgradeTo(request, socket, head, target),
      (error: unknown) => refuseUpgrade(socket, apiFailure(error))
    )
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  await new Promise<void>((resolve) => tunnels.listen(0, "127.0.0.1", resolve))
  const tunnelBase = `http://127.0.0.1:${(tunnels.address() as AddressInfo).port}`
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    instance,
    requests,
    tunnelRequests,
    devboxes,
    tunnelUrl: (port, key) => `${tunnelBase}/${port}-${key}`,
    faults,
    close: async () => {
      devboxes.stopClocks()
      for (const session of sessions) session.destroy()
      tunnels.closeAllConnections()
      for (const socket of upgraded) socket.destroy()
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        new Promise<void>((resolve) => tunnels.close(() => resolve()))
      ])
      await removeAll(instance)
      for (const devbox of devboxes.byId.values()) devbox.spawner.close()
      await snapshots.removeAll()
    }
  }
}

/** The stand-in as a scoped resource: closed (containers removed) with the scope. */
export const standIn = (options: StandInOptions) =>
  Effect.acquireRelease(Effect.promise(() => startStandIn(options)), (s) => Effect.promise(() => s.close()))
