/**
 * A keyed action server under attack: the built payload started as LocalRuntime
 * starts it (own temp workspace and state dir, a random session key), plus what the
 * groups observe of it from outside: raw HTTP, `/alive` latency, its memory.
 */
import { Effect, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { defaultServerEntry, startServerProcess } from "../../src/layers/local/serverProcess.ts"
import type { RuntimeTools } from "../../src/services/RuntimeOptions.ts"
import { sleep } from "./rows.ts"
import { acquire } from "./scoped.ts"

/** The shipped server (the bundled payload, rebuilt first if src/ changed), as LocalRuntime runs it. */
export const payloadEntry = (): string => Effect.runSync(defaultServerEntry)

export interface ChaosServer {
  readonly pid: number
  readonly port: number
  readonly key: string
  readonly workspace: string
  readonly stateDir: string
  /** The highest peak resident size (VmHWM, MB) the watchdog saw, even once the server is gone. */
  readonly peakMb: () => number
  readonly release: () => Promise<void>
}

const tempDir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)))

/**
 * Start a server with a session key in fresh temp dirs; `release` stops it and removes both.
 * `extra.env` adds to the server's environment (e.g. where it exports its telemetry); `extra.tools` are its
 * tools (server/commandLine.ts).
 */
export const startChaosServer = async (
  extra: { readonly env?: Readonly<Record<string, string>>; readonly tools?: RuntimeTools } = {}
): Promise<ChaosServer> => {
  const workspace = tempDir("chaos-ws-")
  const stateDir = tempDir("chaos-state-")
  // Its own TMPDIR: whatever a hostile request makes it write there (a zip of `/`) goes with it.
  const tmp = tempDir("chaos-tmp-")
  const key = randomBytes(18).toString("base64url")
  const handle = await acquire(startServerProcess({
    workspace,
    stateDir,
    sessionId: `chaos-${randomUUID()}`,
    sessionApiKey: Redacted.make(key),
    noChangeTimeoutSeconds: 5,
    env: { ...extra.env, TMPDIR: tmp },
    ...(extra.tools === undefined ? {} : { tools: extra.tools })
  }))
  const pid = handle.value.pid
  // A watchdog: a server that runs away with memory is killed before it can hurt the machine.
  let peak = peakRssMb(pid) ?? 0
  const watchdog = setInterval(() => {
    peak = Math.max(peak, peakRssMb(pid) ?? 0)
    if ((currentRssMb(pid) ?? 0) > RSS_KILL_MB) killGroup(pid)
  }, 100)
  return {
    pid,
    port: Number(new URL(handle.value.baseUrl).port),
    key,
    workspace,
    stateDir,
    peakMb: () => Math.max(peak, peakRssMb(pid) ?? 0),
    release: async () => {
      clearInterval(watchdog)
      await handle.release()
      for (const dir of [workspace, stateDir, tmp]) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A finished exchange: the status (0 when the connection failed or timed out) and the body. */
export interface RawReply {
  readonly status: number
  readonly body: string
  readonly ms: number
}

/**
 * Send `bytes` exactly as given (no URL normalisation, unlike fetch) and read the
 * answer until the server closes; `timeoutMs` bounds the whole exchange.
 */
export const rawRequest = (port: number, bytes: Buffer | string, timeoutMs = 10_000): Promise<RawReply> =>
  new Promise((resolve) => {
    const start = performance.now()
    const chunks: Array<Buffer> = []
    const socket = connect({ host: "127.0.0.1", port })
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(chunks).toString("latin1")
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      const split = text.indexOf("\r\n\r\n")
      resolve({
        status: match ? Number(match[1]) : 0,
        body: split < 0 ? "" : text.slice(split + 4, split + 4 + 4096),
        ms: performance.now() - start
      })
    }
    const timer = setTimeout(done, timeoutMs)
    socket.on("connect", () => socket.end(bytes))
    socket.on("data", (chunk: Buffer) => {
      if (chunks.reduce((n, c) => n + c.length, 0) < 65_536) chunks.push(chunk)
    })
    socket.on("close", done)
    socket.on("error", () => undefined)
  })

/** One HTTP/1.1 request, `Connection: close`, with a Content-Length for `body`. */
export const httpBytes = (
  method: string,
  target: string,
  headers: Record<string, string>,
  body: Buffer | string = ""
): Buffer => {
  const payload = typeof body === "string" ? Buffer.from(body, "utf8") : body
  const lines = [`${method} ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"]
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`)
  if (method !== "GET" || payload.length > 0) lines.push(`Content-Length: ${payload.length}`)
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), payload])
}

/**
 * One exchange through node:http, which keeps its side of the connection open until the answer (a
 * half-closed request, as `rawRequest` sends, is dropped by the server before a slow answer); `body`
 * may be pieces to stream (large attack bodies). A connection that fails or times out is status 0.
 */
export const httpExchange = (
  port: number,
  request: {
    readonly method: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly body?: string | Iterable<Buffer>
    readonly timeoutMs?: number
  }
): Promise<RawReply> =>
  new Promise((resolve) => {
    const start = performance.now()
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: request.method,
      path: request.path,
      ...(request.headers === undefined ? {} : { headers: request.headers }),
      timeout: request.timeoutMs ?? 30_000
    }, (res) => {
      let text = ""
      res.setEncoding("latin1")
      res.on("data", (chunk: string) => {
        if (text.length < 65_536) text += chunk
      })
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - start }))
      res.on("error", () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - start }))
    })
    const failed = () => resolve({ status: 0, body: "", ms: performance.now() - start })
    req.on("timeout", () => req.destroy())
    req.on("error", failed)
    if (request.body === undefined || typeof request.body === "string") req.end(request.body)
    else Readable.from(request.body).on("error", failed).pipe(req)
  })

/** A request with the session key through node:http (`httpExchange`). */
export const keyedRequest = (
  server: ChaosServer,
  request: Parameters<typeof httpExchange>[1]
): Promise<RawReply> =>
  httpExchange(server.port, { ...request, headers: { "X-Session-API-Key": server.key, ...request.headers } })

/** Whether anything accepts a TCP connection at `host:port` within `timeoutMs`. */
export const accepts = (host: string, port: number, timeoutMs: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs })
    const done = (open: boolean) => {
      socket.destroy()
      resolve(open)
    }
    socket.once("connect", () => done(true)).once("error", () => done(false)).once("timeout", () => done(false))
  })

/**
 * This host's addresses other than loopback, where someone on the network would knock (the Docker
 * bridge's among them). IPv6 link-local ones are left out: they answer only with an interface named.
 */
export const outerAddresses = (): Array<string> =>
  Object.values(networkInterfaces()).flatMap((list) =>
    (list ?? []).filter((a) => !a.internal && !(a.family === "IPv6" && a.address.startsWith("fe80:"))).map((a) =>
      a.address
    )
  )

/** A keyed JSON request (a string body goes as is). */
export const keyedJson = (
  server: ChaosServer,
  method: string,
  path: string,
  body: unknown,
  timeoutMs = 30_000
): Promise<RawReply> =>
  keyedRequest(server, {
    method,
    path,
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    timeoutMs
  })

/** Run a command with the key; the observation's content (or null when it did not answer 200). */
export const keyedRun = async (server: ChaosServer, command: string, timeoutMs = 30_000): Promise<string | null> => {
  const reply = await keyedJson(server, "POST", "/execute_action", {
    action: { action: "run", args: { command, blocking: true } }
  }, timeoutMs)
  if (reply.status !== 200) return null
  try {
    return String(JSON.parse(reply.body).content)
  } catch {
    return null
  }
}

/** Probe `/alive` every `everyMs` until stopped; keeps the worst latency and counts failures. */
export const aliveProbe = (port: number, everyMs = 100) => {
  let maxMs = 0
  let failures = 0
  const stopped = new AbortController()
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const reply = await rawRequest(port, httpBytes("GET", "/alive", {}), 15_000)
      maxMs = Math.max(maxMs, reply.ms)
      if (reply.status !== 200) failures++
      await sleep(everyMs)
    }
  })()
  return {
    stop: async () => {
      stopped.abort()
      await loop
      return { maxMs, failures }
    }
  }
}

/** A server above this resident size is killed by its watchdog (far above any row's target). */
const RSS_KILL_MB = 1536

const killGroup = (pid: number) => {
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // already gone
  }
}

const statusField = (pid: number, field: string): number | null => {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return kb ? Number(kb[1]) / 1024 : null
  } catch {
    return null
  }
}

/** The process's peak resident memory (VmHWM), in MB; null when it is gone. */
export const peakRssMb = (pid: number): number | null => statusField(pid, "VmHWM")

const currentRssMb = (pid: number): number | null => statusField(pid, "VmRSS")

/** Is the process alive (and not a zombie)? */
export const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    return false
  }
}

/** Live processes whose environment holds `needle` (e.g. a session id), this process excluded. */
export const processesWithEnv = (needle: string): Array<number> => {
  const found: Array<number> = []
  for (const name of readdirSafe("/proc")) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(needle) && alive(pid)) found.push(pid)
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

const readdirSafe = (dir: string): Array<string> => {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
