/**
 * The E2B stand-in: one HTTP server on 127.0.0.1 that is E2B's API (`apiUrl`), envd
 * (`sandboxUrl`: the SDK sends `E2b-Sandbox-Id`/`E2b-Sandbox-Port` with every envd call, as it does
 * to E2B's own `sandbox.<domain>` proxy) and the sandboxes' port traffic. Machines here resolve no
 * wildcard names, so `<port>-<sandboxId>.<domain>` (the SDK's `getHost(port)`) is reached at
 * `hostUrl(host)` = `<url>/.hosts/<host>`, and proxied to that port of the sandbox's container.
 * See README.md.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { applyHttpFault, Faults } from "../faults.ts"
import { ApiError, type ProxyTarget, proxyTo, proxyUpgradeTo, refuseUpgrade, upgradedSockets } from "../standin.ts"
import { readBody, requestMessage, unaryError } from "./connect.ts"
import { leftovers, removeContainer } from "./docker.ts"
import { readFile, writeFiles } from "./files.ts"
import { listProcesses, signalProcess, startProcess } from "./process.ts"
import {
  apiError,
  DEFAULT_MAX_LENGTH_SECONDS,
  json,
  type NewSandbox,
  type Sandbox,
  Sandboxes,
  type StandinTemplate,
  type TransitionState
} from "./sandboxes.ts"
import type { SnapshotTemplates } from "./snapshotTemplates.ts"

export interface StandinOptions {
  /** Template id → what a sandbox of it runs. */
  readonly templates: Readonly<Record<string, StandinTemplate>>
  /** The one API key accepted (`X-API-Key`). */
  readonly apiKey: string
  /** The team's cap on a sandbox's life from its start, in seconds (default 3600: the Hobby plan's). */
  readonly maxLengthSeconds?: number
}

/** What a client connection into a sandbox carries. */
export type ConnectionKind = "envd" | "traffic" | "websocket"

/** A control-plane call as the SDK sent it. */
export interface RecordedCall {
  readonly method: string
  readonly path: string
  readonly body: unknown
}

export interface Standin {
  readonly url: string
  readonly instance: string
  /** Every control-plane call received, in order. */
  readonly calls: ReadonlyArray<RecordedCall>
  /** The URL that reaches `getHost(port)`'s host. */
  readonly hostUrl: (host: string) => string
  readonly sandboxes: ReadonlyMap<string, Sandbox>
  /** The snapshots taken of sandboxes (snapshotTemplates.ts). */
  readonly snapshots: SnapshotTemplates
  /**
   * What the next matching requests meet (../faults.ts), API and envd alike, matched on the path
   * as the SDK sends it (`/v2/sandboxes`, `/sandboxes/<id>/timeout`, `/process.Process/Start`).
   */
  readonly faults: Faults
  /** Every connection a pause cut, by what it carried (`envd`, `traffic` to a port, a `websocket`). */
  readonly cuts: ReadonlyArray<{ readonly sandbox: string; readonly kind: ConnectionKind }>
  /** Hold a sandbox in a transition (`pausing`, `snapshotting`, `killing`) until `until` settles. */
  readonly transition: (id: string, state: TransitionState, until: Promise<unknown>) => Promise<void>
  /** Ids of the containers this instance made that still exist. */
  readonly containers: () => Promise<Array<string>>
  readonly close: () => Promise<void>
}

const INVALID_KEY = "Invalid API key, please visit https://e2b.dev/docs/api-key for more information."

/** The user envd runs a call as: `Authorization: Basic base64("<user>:")`, else the template's default. */
const userOf = (request: IncomingMessage, sandbox: Sandbox, url: URL) => {
  const named = url.searchParams.get("username")
  if (named !== null && named !== "") return named
  const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? "")?.[1]
  const user = basic === undefined ? "" : Buffer.from(basic, "base64").toString("utf8").replace(/:$/, "")
  return user !== "" ? user : (sandbox.template.user ?? "user")
}

export const startStandin = async (options: StandinOptions): Promise<Standin> => {
  const instance = randomBytes(4).toString("hex")
  const faults = new Faults()
  /**
   * The sandbox each client connection last reached (envd, port traffic, WebSockets): a pause
   * snapshots the VM and cuts them, as on E2B, pooled keep-alive sockets included.
   */
  const reaching = new Map<Duplex, { readonly sandbox: string; readonly kind: ConnectionKind }>()
  const reach = (socket: Duplex, sandbox: string, kind: ConnectionKind) => {
    if (!reaching.has(socket)) socket.once("close", () => reaching.delete(socket))
    reaching.set(socket, { sandbox, kind })
  }
  const cuts: Array<{ readonly sandbox: string; readonly kind: ConnectionKind }> = []
  const cutConnections = (id: string) => {
    for (const [socket, reached] of reaching) {
      if (reached.sandbox !== id) continue
      cuts.push(reached)
      socket.destroy()
    }
  }
  const sandboxes = new Sandboxes(
    instance,
    options.templates,
    options.maxLengthSeconds ?? DEFAULT_MAX_LENGTH_SECONDS,
    cutConnections
  )
  const calls: Array<RecordedCall> = []

  const envd = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const sandbox = sandboxes.byId.get(String(request.headers["e2b-sandbox-id"]))
    if (sandbox !== undefined) reach(request.socket, sandbox.sandboxID, "envd")
    if (sandbox === undefined || (sandbox.state !== "running" && sandbox.state !== "snapshotting")) {
      return unaryError(response, "unavailable", "sandbox is not running")
    }
    if (url.pathname === "/health") return response.writeHead(204).end()
    if (request.headers["x-access-token"] !== sandbox.envdAccessToken) {
      return unaryError(response, "unauthenticated", "invalid access token")
    }
    const user = userOf(request, sandbox, url)
    if (url.pathname === "/files" && request.method === "POST") {
      return writeFiles(sandbox, user, request, url, response)
    }
    if (url.pathname === "/files" && request.method === "GET") return readFile(sandbox.container, url, response)
    const host = { spawner: sandbox.spawner, processes: sandbox.processes }
    const message = requestMessage(request, await readBody(request)) as never
    switch (url.pathname) {
      case "/process.Process/Start":
        return startProcess(host, user, message, request, response)
      case "/process.Process/List":
        return listProcesses(host, response)
      case "/process.Process/SendSignal":
        return signalProcess(host, message, response)
    }
    unaryError(response, "unimplemented" as never, `${url.pathname} is not served by the stand-in`)
  }

  /**
   * Where `/.hosts/<port>-<sandboxId>.<domain>/<path>` goes: that port of the sandbox's container,
   * with the host as `Host` (E2B's default), or a 502 answer in E2B's words.
   */
  const trafficTarget = (url: URL): (ProxyTarget & { readonly sandbox: string }) | { readonly refused: string } => {
    const [, host = "", ...rest] = url.pathname.slice(1).split("/")
    const match = /^(\d+)-([^.]+)\./.exec(host)
    const sandbox = match === null ? undefined : sandboxes.byId.get(match[2]!)
    if (match === null || sandbox === undefined) return { refused: `The sandbox of ${host} was not found` }
    return {
      sandbox: sandbox.sandboxID,
      host: sandbox.ip,
      port: Number(match[1]),
      path: `/${rest.join("/")}${url.search}`,
      hostHeader: host,
      prefix: `/.hosts/${host}`
    }
  }

  /** Port traffic, proxied to the sandbox (a client that goes away closes the sandbox's connection too). */
  const traffic = (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const target = trafficTarget(url)
    if ("refused" in target) return apiError(response, 502, target.refused)
    reach(request.socket, target.sandbox, "traffic")
    proxyTo(request, response, target, () => apiError(response, 502, "The sandbox is running but port is not open"))
  }

  const api = async (request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer) => {
    const body = raw.length === 0 ? {} : JSON.parse(raw.toString("utf8"))
    calls.push({ method: request.method ?? "", path: url.pathname + url.search, body })
    if (request.headers["x-api-key"] !== options.apiKey) return apiError(response, 401, INVALID_KEY)
    const [, version, collection, id, action] =
      /^\/(v2\/)?(sandboxes|snapshots|templates)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(url.pathname) ?? []
    if (collection === undefined) return apiError(response, 404, `${url.pathname} is not served by the stand-in`)
    if (collection === "snapshots" && request.method === "GET" && id === undefined) {
      return json(response, 200, sandboxes.snapshots.list(url.searchParams))
    }
    if (collection === "templates" && request.method === "DELETE" && id !== undefined && action === undefined) {
      const templateID = decodeURIComponent(id)
      return (await sandboxes.snapshots.remove(templateID))
        ? response.writeHead(204).end()
        : apiError(response, 404, `template '${templateID}' not found`)
    }
    if (collection !== "sandboxes") return apiError(response, 404, `${url.pathname} is not served by the stand-in`)
    const route = `${request.method} ${version ?? ""}${id === undefined ? "" : "{id}"}${
      action === undefined ? "" : `/${action}`
    }`
    switch (route) {
      case "POST v2/":
        return sandboxes.create(body as NewSandbox, response)
      case "GET v2/":
        return sandboxes.list(url.searchParams, response)
      case "GET {id}":
        return sandboxes.get(id!, response)
      case "DELETE {id}":
        return (await sandboxes.kill(id!))
          ? response.writeHead(204).end()
          : apiError(response, 404, `sandbox "${id}" not found`)
      case "POST {id}/timeout":
        return sandboxes.setTimeout(id!, body, response)
      case "POST {id}/pause":
        return sandboxes.pause(id!, body, response)
      case "POST {id}/snapshots":
        return sandboxes.snapshot(id!, body, response)
      case "POST v2/{id}/connect":
        return sandboxes.connect(id!, body, response)
    }
    apiError(response, 404, `${request.method} ${url.pathname} is not served by the stand-in`)
  }

  /**
   * A queued fault first (E2B's error body for a status), then the API or envd. An API request is
   * read whole before its fault: a create held past its client's patience is still made, as a
   * service that took the request finishes it.
   */
  const served = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const raw = request.headers["e2b-sandbox-id"] === undefined ? await readBody(request) : undefined
    const fault = faults.take(request.method ?? "GET", url.pathname)
    if (fault !== undefined && await applyHttpFault(fault, request, response, (code, message) => ({ code, message }))) {
      return
    }
    return raw === undefined ? envd(request, response, url) : api(request, response, url, raw)
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://standin")
    const handled = url.pathname.startsWith("/.hosts/")
      ? Promise.resolve(traffic(request, response, url))
      : served(request, response, url)
    handled.catch((error: unknown) => {
      if (!response.headersSent) apiError(response, 500, String(error))
      else response.destroy()
    })
  })
  // WebSockets to a sandbox's port, as E2B's proxy carries them (VS Code's workbench needs them).
  const upgraded = upgradedSockets(server)
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", "http://standin")
    const target = url.pathname.startsWith("/.hosts/")
      ? trafficTarget(url)
      : { refused: `${url.pathname} takes no upgrade` }
    if ("refused" in target) return refuseUpgrade(socket, new ApiError(502, target.refused))
    reach(socket, target.sandbox, "websocket")
    proxyUpgradeTo(request, socket, head, target)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    instance,
    calls,
    hostUrl: (host) => `${url}/.hosts/${host}`,
    sandboxes: sandboxes.byId,
    snapshots: sandboxes.snapshots,
    faults,
    cuts,
    transition: (id, state, until) => sandboxes.transition(id, state, until),
    containers: () => leftovers(instance),
    close: async () => {
      for (const sandbox of sandboxes.byId.values()) clearTimeout(sandbox.timer)
      for (const socket of upgraded) socket.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await Promise.all((await leftovers(instance)).map(removeContainer))
      for (const sandbox of sandboxes.byId.values()) sandbox.spawner.close()
      await sandboxes.snapshots.removeImages()
    }
  }
}

/** The stand-in as a scoped resource: closed (every container removed) with the scope. */
export const standin = (options: StandinOptions) =>
  Effect.acquireRelease(Effect.promise(() => startStandin(options)), (s) => Effect.promise(() => s.close()))
