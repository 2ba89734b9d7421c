/**
 * Helpers for the action server's HTTP tests: a real server child process
 * (`startServerProcess`) in a temp workspace, a plain `fetch` client, and
 * /proc probes for the processes a server and its shells leave behind.
 */
import { assert } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServerProcess } from "../../src/layers/local/serverProcess.ts"
import type { RuntimeTools } from "../../src/services/RuntimeOptions.ts"

/** A running server under test. */
export interface TestServerShape {
  readonly baseUrl: string
  readonly pid: number
  /** Its `SESSION_API_KEY` (startServerProcess always sets one). */
  readonly key: string
  /** Its `RUNTIME_ID`: its shells carry `EFFECT_SANDBOX_SESSION=<sessionId>/...`. */
  readonly sessionId: string
  /** The working directory (a temp dir, realpath'd, removed after the server stops). */
  readonly workspace: string
}

export class TestServer extends Context.Service<TestServer, TestServerShape>()("test/server/TestServer") {}

/** Every server pid these tests started, so a test can check that none outlives it. */
export const startedPids = new Set<number>()

/** A fresh temp directory, removed when the scope closes. */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), prefix)))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

export interface StartOptions {
  readonly key?: string
  readonly env?: Readonly<Record<string, string>>
  /** The server's tools (server/commandLine.ts). */
  readonly tools?: RuntimeTools
}

/** Start a server in a temp workspace; it is stopped (and the workspace removed) when the scope closes. */
export const startTestServer = (options: StartOptions = {}) =>
  Effect.gen(function*() {
    const workspace = yield* tempDir("server-test-")
    const sessionId = `server-test-${randomUUID()}`
    const key = options.key ?? `key-${randomUUID()}`
    const stateDir = yield* tempDir("server-test-state-")
    const process = yield* startServerProcess({
      workspace,
      stateDir,
      sessionId,
      sessionApiKey: Redacted.make(key),
      noChangeTimeoutSeconds: 10,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.tools === undefined ? {} : { tools: options.tools })
    })
    startedPids.add(process.pid)
    return TestServer.of({ baseUrl: process.baseUrl, pid: process.pid, key, sessionId, workspace })
  })

/** One server shared by the tests of an `it.layer` block. */
export const serverLayer = (options: StartOptions = {}) => Layer.effect(TestServer, startTestServer(options))

/** A finished HTTP exchange. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Uint8Array
  readonly text: string
}

export interface CallOptions {
  readonly method?: string
  readonly body?: NonNullable<RequestInit["body"]>
  readonly headers?: Record<string, string>
  /** Send the server's key (default true); a string sends that key instead. */
  readonly auth?: boolean | string
}

/** One request with `fetch`; fails (typed) when the connection fails. */
export const call = (server: TestServerShape, path: string, options: CallOptions = {}) =>
  Effect.tryPromise(async (signal) => {
    const auth = options.auth ?? true
    const headers: Record<string, string> = { ...options.headers }
    if (auth !== false) headers["X-Session-API-Key"] = auth === true ? server.key : auth
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: options.method ?? (options.body === undefined ? "GET" : "POST"),
      headers,
      signal,
      ...(options.body === undefined ? {} : { body: options.body }),
      ...(options.body instanceof ReadableStream ? { duplex: "half" } : {})
    })
    const bytes = new Uint8Array(await response.arrayBuffer())
    return { status: response.status, headers: response.headers, bytes, text: new TextDecoder().decode(bytes) }
  })

/** POST a JSON value (or a raw string body as is). */
export const postJson = (server: TestServerShape, path: string, body: unknown, options: CallOptions = {}) =>
  call(server, path, {
    ...options,
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...options.headers }
  })

/** The parsed JSON body of a reply (the test fails if it is not JSON). */
export const json = (reply: Reply): any => {
  try {
    return JSON.parse(reply.text)
  } catch {
    assert.fail(`expected a JSON body (HTTP ${reply.status}), got: ${JSON.stringify(reply.text.slice(0, 300))}`)
  }
}

/** Assert an error reply: `status`, and a `{"detail": ...}` body containing `fragment`. */
export const assertDetail = (reply: Reply, status: number, fragment: string) => {
  const body = json(reply)
  assert.strictEqual(reply.status, status, `HTTP status (body: ${reply.text.slice(0, 300)})`)
  assert.strictEqual(typeof body?.detail, "string", `a "detail" string in ${reply.text.slice(0, 300)}`)
  assert.include(body.detail as string, fragment)
}

/** The OpenHands JSON of a `run` action. */
export const runAction = (command: string, extra: Record<string, unknown> = {}) => ({
  action: { action: "run", args: { command, ...extra } }
})

/** Run a command through /execute_action; returns the observation JSON (asserting HTTP 200). */
export const run = (server: TestServerShape, command: string) =>
  postJson(server, "/execute_action", runAction(command)).pipe(
    Effect.map((reply) => {
      assert.strictEqual(reply.status, 200, reply.text)
      return json(reply)
    })
  )

/** POST /v1/execute_action/stream, with each NDJSON event and when it arrived (performance.now()). */
export const streamAction = (server: TestServerShape, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${server.baseUrl}/v1/execute_action/stream`, {
      method: "POST",
      headers: { "X-Session-API-Key": server.key, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    assert.strictEqual(response.status, 200)
    assert.include(response.headers.get("content-type") ?? "", "ndjson")
    const seen: Array<{ readonly at: number; readonly event: any }> = []
    let buffer = ""
    const decoder = new TextDecoder()
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        seen.push({ at: performance.now(), event: JSON.parse(buffer.slice(0, nl)) })
        buffer = buffer.slice(nl + 1)
      }
    }
    assert.strictEqual(buffer, "", "the stream ends with a newline")
    return seen
  })

/** GET /alive answers 200 `{"status":"ok"}`. */
export const assertAlive = (server: TestServerShape) =>
  call(server, "/alive", { auth: false }).pipe(
    Effect.map((reply) => {
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(json(reply), { status: "ok" })
    })
  )

/** A multipart body with `content` as the field `file` named `filename`. */
export const fileForm = (filename: string, content: Uint8Array | string) => {
  const form = new FormData()
  form.append("file", new Blob([typeof content === "string" ? content : new Uint8Array(content)]), filename)
  return form
}

const readProc = (pid: number, file: string): string | null => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "latin1")
  } catch {
    return null
  }
}

/** Is `pid` a live (non-zombie) process whose command line contains `fragment`? */
export const isRunning = (pid: number, fragment: string): boolean => {
  const stat = readProc(pid, "stat")
  if (stat === null || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
  return (readProc(pid, "cmdline") ?? "").split("\0").join(" ").includes(fragment)
}

/** Live processes whose environment carries `EFFECT_SANDBOX_SESSION=<runtimeId>/...`, with their command lines. */
export const markedProcesses = (runtimeId: string): Array<{ readonly pid: number; readonly cmdline: string }> => {
  const prefix = `EFFECT_SANDBOX_SESSION=${runtimeId}/`
  return readdirSync("/proc").map(Number).filter((pid) => Number.isInteger(pid) && pid !== process.pid).flatMap(
    (pid) => {
      const environ = readProc(pid, "environ")
      if (environ === null || !environ.split("\0").some((e) => e.startsWith(prefix))) return []
      if (!isRunning(pid, "")) return []
      return [{ pid, cmdline: (readProc(pid, "cmdline") ?? "").split("\0").join(" ").trim() }]
    }
  )
}
