/**
 * Requests sent while a server is still starting. The action server listens before its shell has
 * prompted and holds what comes at its front door until then (src/server/frontDoor.ts): a request
 * that came early must meet the same gate and get the same answer as one that came later, never an
 * answer from a half-built server, and never be dropped. Each start here is raced by a client that
 * connects the moment the port accepts and sends, at once, a keyless action, a wrongly keyed one, a
 * keyed command, `/alive` and a keyless `/server_info`; every answer is then checked.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freeLoopbackPort } from "../../src/layers/local/loopbackPort.ts"
import { atMost, type Row, sleep } from "./rows.ts"
import { accepts, httpExchange, payloadEntry } from "./server.ts"

/** Resolves once `port` accepts a connection (tried every millisecond), false after `withinMs`. */
const acceptsSoon = async (port: number, withinMs: number) => {
  for (const end = performance.now() + withinMs; performance.now() < end; await sleep(1)) {
    if (await accepts("127.0.0.1", port, 1_000)) return true
  }
  return false
}

const action = (command: string) => JSON.stringify({ action: { action: "run", args: { command, blocking: true } } })

/** One exchange; its status and body (status 0: no answer within 15 s). */
const exchange = (port: number, method: string, path: string, headers: Record<string, string>, body = "") =>
  httpExchange(port, { method, path, headers, body, timeoutMs: 15_000 })

const JSON_TYPE = { "content-type": "application/json" }

/** The early requests of one start, each with what its answer must be. */
const earlyRequests = (key: string) =>
  [
    {
      what: "keyless action",
      send: (port: number) => exchange(port, "POST", "/execute_action", JSON_TYPE, action("id")),
      right: (status: number, body: string) => status === 403 && body === `{"detail":"Invalid API Key"}`
    },
    {
      what: "wrongly keyed action",
      send: (port: number) =>
        exchange(port, "POST", "/execute_action", { ...JSON_TYPE, "x-session-api-key": `${key}x` }, action("id")),
      right: (status: number, body: string) => status === 403 && body === `{"detail":"Invalid API Key"}`
    },
    {
      what: "keyed command",
      send: (port: number) =>
        exchange(
          port,
          "POST",
          "/execute_action",
          { ...JSON_TYPE, "x-session-api-key": key },
          action("echo early-$((6*7))")
        ),
      right: (status: number, body: string) => {
        if (status !== 200) return false
        const observation = JSON.parse(body) as { content?: string; extras?: { metadata?: { exit_code?: number } } }
        return observation.content === "early-42" && observation.extras?.metadata?.exit_code === 0
      }
    },
    {
      what: "/alive",
      send: (port: number) => exchange(port, "GET", "/alive", {}),
      right: (status: number, body: string) => status === 200 && body === `{"status":"ok"}`
    },
    {
      what: "keyless /server_info",
      send: (port: number) => exchange(port, "GET", "/server_info", {}),
      right: (status: number, body: string) => status === 200 && !body.includes("resources")
    }
  ] as const

/** Start a server on a given port; the child, and its directories to remove. */
const startOn = (port: number, key: string) => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "chaos-early-")))
  const child: ChildProcess = spawn(
    process.execPath,
    [payloadEntry(), String(port), "--working-dir", workspace, "--no-enable-browser", "--exit-on-stdin-close"],
    { stdio: ["pipe", "ignore", "ignore"], env: { ...process.env, SESSION_API_KEY: key } }
  )
  return {
    child,
    stop: async () => {
      child.stdin?.end()
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve))
      rmSync(workspace, { recursive: true, force: true })
    }
  }
}

export const earlyRequestRows = async (starts: number): Promise<ReadonlyArray<Row>> => {
  let sent = 0
  let wrong = 0
  let reached = 0
  for (let i = 0; i < starts; i++) {
    const key = randomBytes(18).toString("base64url")
    // The server must be given its port, to be reached before it says it listens.
    const port = await Effect.runPromise(freeLoopbackPort)
    const server = startOn(port, key)
    try {
      if (!(await acceptsSoon(port, 15_000))) continue
      reached++
      const requests = earlyRequests(key)
      const replies = await Promise.all(requests.map((request) => request.send(port)))
      requests.forEach((request, n) => {
        sent++
        const reply = replies[n]!
        let right = false
        try {
          right = request.right(reply.status, reply.body)
        } catch {
          right = false
        }
        if (!right) {
          wrong++
          console.log(`  early ${request.what}: ${reply.status} ${reply.body.slice(0, 200)}`)
        }
      })
    } finally {
      await server.stop()
    }
  }
  console.log(`  early requests: ${sent} sent over ${reached} of ${starts} starts, ${wrong} answered wrongly or not`)
  return [
    atMost(
      `fuzz: early requests (sent as the port first accepts) answered wrongly or dropped (of ${sent}; starts reached ${reached}/${starts})`,
      wrong + (starts - reached) * earlyRequests("").length,
      "requests",
      0
    )
  ]
}
