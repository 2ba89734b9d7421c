/**
 * The runtime API server for the tests: `effect-sandbox-runtime-api` run as its own process (so it
 * can be killed and restarted like a deployed one), and a client of it written from spec §14
 * alone with plain `fetch` (none of our client code), as any OpenHands-compatible client would be.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { dockerCli } from "../docker/helpers.ts"
import { baseImage, containersWithLabel } from "../docker/infra.ts"

const MAIN = join(import.meta.dirname, "..", "..", "src", "runtimeApi", "main.ts")

/** Every container these tests make is named `<PREFIX>-<session>`: a failed run is cleaned up by name. */
export const PREFIX = "rapi-test"

/** A session id unique to one test. */
export const newSessionId = () => `rapi-${randomBytes(5).toString("hex")}`

export interface ApiServer {
  readonly base: string
  readonly process: ChildProcess
  /** Stop it (SIGKILL: a crash, the sandboxes stay) and wait until it is gone. */
  readonly kill: () => Promise<void>
}

/** Start the API server with `args` and `EFFECT_SANDBOX_API_KEY=key`; resolves once it listens. */
export const startApiServer = (args: ReadonlyArray<string>, key: string): Promise<ApiServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "--port", "0", "--container-name-prefix", PREFIX, ...args], {
      env: { ...process.env, EFFECT_SANDBOX_API_KEY: key, SANDBOX_BASE_CONTAINER_IMAGE: baseImage() },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => stderr += chunk.toString("utf8"))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const port = /effect-sandbox-runtime-api listening \{[^}]*"port":(\d+)/.exec(stdout)?.[1]
      if (port !== undefined) {
        resolve({
          base: `http://127.0.0.1:${port}`,
          process: child,
          kill: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done()
              child.once("exit", () => done())
              child.kill("SIGKILL")
            })
        })
      }
    })
    child.once("exit", (code) => reject(new Error(`the API server exited (${code}) before listening: ${stderr}`)))
  })

export interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
}

/** One runtime API call as §14 makes it: JSON in and out, the key in `X-API-Key`. */
export const call = async (
  base: string,
  method: "GET" | "POST",
  path: string,
  options: { readonly key?: string | undefined; readonly body?: unknown } = {}
): Promise<Answer> => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.key === undefined ? {} : { "X-API-Key": options.key }),
      ...(options.body === undefined ? {} : { "Content-Type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(120_000)
  })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** What `/start` answers (§14). */
export interface Started {
  readonly runtime_id: string
  readonly url: string
  readonly work_hosts: Record<string, number>
  readonly session_api_key: string
}

/** Poll `/runtime/{id}` every 250 ms until `pod_status` is `ready` (as OpenHands' `_wait_until_alive`). */
export const waitReady = async (base: string, key: string, runtimeId: string) => {
  for (let attempt = 0; attempt < 240; attempt++) {
    const { body } = await call(base, "GET", `/runtime/${runtimeId}`, { key })
    if (body["pod_status"] === "ready") return body
    if (body["pod_status"] === "failed") throw new Error(`runtime failed: ${JSON.stringify(body)}`)
    await new Promise((done) => setTimeout(done, 250))
  }
  throw new Error(`runtime ${runtimeId} never became ready`)
}

/** `POST <url>/execute_action` of a `run` action, with the sandbox's `X-Session-API-Key`; the observation. */
export const run = async (url: string, sessionKey: string, command: string) => {
  const response = await fetch(`${url}/execute_action`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Session-API-Key": sessionKey },
    body: JSON.stringify({ action: { action: "run", args: { command } } }),
    signal: AbortSignal.timeout(60_000)
  })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** Containers (running or not) of a session. */
export const sessionContainers = (sessionId: string) => containersWithLabel(`effect-sandbox.session=${sessionId}`)

/** Remove whatever a failed test left: every container named `<PREFIX>-...`. */
export const removeLeftovers = () => {
  const ids = dockerCli("ps", "-aq", "--filter", `name=${PREFIX}-`).stdout.split("\n").filter((id) => id !== "")
  if (ids.length > 0) dockerCli("rm", "-f", "-v", ...ids)
}
