/**
 * `effect-sandbox-runtime-api` run as its own process (so it can be killed and restarted like a
 * deployed one) and the runtime API called as spec §14 describes it, with plain `fetch` (none of
 * our client code): shared by the tests (test/remote/), the bench row (bench/remote.ts) and the
 * chaos group (bench/chaos/runtimeApi.ts), which each add their prefix, image and environment.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { join } from "node:path"

const MAIN = join(import.meta.dirname, "..", "src", "runtimeApi", "main.ts")

export interface ApiServer {
  readonly base: string
  readonly process: ChildProcess
  /** What it wrote on stderr so far (its notices at start come before it listens). */
  readonly stderr: () => string
  /** Stop it (SIGKILL: a crash, the sandboxes stay) and wait until it is gone. */
  readonly kill: () => Promise<void>
}

/**
 * Start the API server with `args` (`--port 0` first: it picks a port, read from its listening
 * line) and `env` over this process's; resolves once it listens.
 */
export const startApiServer = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>>
): Promise<ApiServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "--port", "0", ...args], {
      env: { ...process.env, ...env },
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
          stderr: () => stderr,
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

/** Remove every container named `<prefix>-...` (what a Docker-backed API server with that prefix made). */
export const removeContainersNamed = (prefix: string) => {
  const ids = spawnSync("docker", ["ps", "-aq", "--filter", `name=${prefix}-`], { encoding: "utf8" }).stdout
    .split("\n").filter((id) => id !== "")
  if (ids.length > 0) spawnSync("docker", ["rm", "-f", "-v", ...ids], { stdio: "ignore" })
}
