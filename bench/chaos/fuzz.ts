/**
 * Group 1, fuzz: at least 10,000 malformed or hostile requests against a keyed
 * action server. Every unauthenticated request that carries a command or an upload
 * would create a marker file (`pwn-<n>`) outside the workspace if it ran; the
 * server must never answer 5xx, never die, keep `/alive` fast, and still run a
 * keyed action afterwards.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { earlyRequestRows } from "./earlyRequests.ts"
import { atLeast, atMost, type GroupContext, type Row } from "./rows.ts"
import { alive, aliveProbe, type ChaosServer, httpBytes, keyedRun, rawRequest, startChaosServer } from "./server.ts"

const PROTECTED = [
  "/execute_action",
  "/v1/execute_action/stream",
  "/update_mcp_server",
  "/upload_file",
  "/download_files",
  "/list_files",
  "/v1/env",
  "/v1/mcp/tools",
  "/v1/capabilities",
  "/mcp/messages",
  "/vscode/connection_token"
]

/** Spellings of a protected path that a normaliser might read as an open one (or as itself). */
const ambiguous = (path: string): ReadonlyArray<string> => [
  `${path};/../alive`,
  `${path};/../server_info`,
  `${path}/..;/alive`,
  `${path}%2f..%2falive`,
  `${path}%2F..%2Falive`,
  `${path}/%2e%2e/alive`,
  `${path}/%2E%2E/alive`,
  `/alive/..${path}`,
  `/alive/%2e%2e${path}`,
  `/alive%2f..${path}`,
  `/%2e%2e${path}`,
  `/.${path}`,
  `/./${path.slice(1)}`,
  `//${path.slice(1)}`,
  `${path}//`,
  `${path}/`,
  `${path}%00`,
  `${path}%00/../alive`,
  `${path}?x=/../alive`,
  `${path}#/../alive`,
  `${path};jsessionid=1`,
  `${path}\\..\\alive`,
  `${path}%5c..%5calive`,
  `http://127.0.0.1${path}`,
  `http://127.0.0.1/alive/..${path}`,
  `${path.toUpperCase()}`,
  `${path}%20`,
  `${path}\t`,
  `/%65xecute_action`.replace("/execute_action", path)
]

/** A deterministic generator, so a failing run can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const INHERITED = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "prototype"]

/** Bodies a keyed client might send that no decoder should choke on. */
const malformedBodies = (rand: () => number): ReadonlyArray<string> => {
  const depth = 1000 + Math.floor(rand() * 20_000)
  return [
    "",
    "{",
    "{\"action\":",
    "null",
    "[]",
    "\"run\"",
    "1e99999",
    "{\"action\":null}",
    "{\"action\":[]}",
    "{\"action\":{\"action\":\"run\",\"args\":null}}",
    "{\"action\":{\"action\":\"run\",\"args\":{\"command\":42}}}",
    "{\"action\":{\"action\":\"read\",\"args\":{\"path\":{\"$ref\":1}}}}",
    `{"action":{"action":"${INHERITED[Math.floor(rand() * INHERITED.length)]}","args":{}}}`,
    `{"__proto__":{"action":"run"},"action":{"action":"constructor"}}`,
    `{"action":{"action":"run","args":{"command":"echo","__proto__":{"blocking":true}}}}`,
    "[".repeat(depth) + "]".repeat(depth),
    "{\"a\":".repeat(depth) + "1" + "}".repeat(depth),
    `{"action":{"action":"run","args":{"command":"${"\\u0000".repeat(200)}"}}}`,
    `{"action":{"action":"run","args":{"command":"${"\\ud800"}"}}}`,
    `{"action":{"action":"message","args":{"content":"${"x".repeat(1_000_000)}"}}}`,
    "\u00ff\u00fe{}",
    "{\"action\":{\"action\":\"run\",\"args\":{\"command\":\"true\",\"timeout\":-1e308}}}"
  ]
}

const multipart = (boundary: string, parts: string) => `--${boundary}\r\n${parts}\r\n--${boundary}--\r\n`

/** One hostile request. */
interface Attack {
  readonly bytes: Buffer
}

/** An unauthenticated request to `path` (a spelling of `endpoint`) that would leave `marker` if it ran. */
const bypass = (method: string, endpoint: string, path: string, marker: string, markerDir: string): Buffer => {
  const body = endpoint === "/update_mcp_server"
    ? JSON.stringify([{ name: "m", command: "sh", args: ["-c", `touch ${marker}`], env: {} }])
    : endpoint === "/upload_file"
    ? multipart("b0undary", `Content-Disposition: form-data; name="file"; filename="${basename(marker)}"\r\n\r\nx`)
    : JSON.stringify({ action: { action: "run", args: { command: `touch ${marker}`, blocking: true } } })
  const headers: Record<string, string> = endpoint === "/upload_file"
    ? { "content-type": "multipart/form-data; boundary=b0undary" }
    : { "content-type": "application/json" }
  const target = endpoint === "/upload_file" ? `${path}?destination=${markerDir}` : path
  return httpBytes(method, target, headers, body)
}

/**
 * The fixed table sent first, so even a short run covers it: every ambiguous
 * spelling of every protected endpoint without a key, and every inherited name as
 * an action type with the key.
 */
const table = (server: ChaosServer, markerDir: string): ReadonlyArray<Buffer> => [
  ...PROTECTED.flatMap((endpoint, e) =>
    ambiguous(endpoint).map((path, p) =>
      bypass("POST", endpoint, path, join(markerDir, `pwn-table-${e}-${p}`), markerDir)
    )
  ),
  ...INHERITED.flatMap((name) =>
    ["/execute_action", "/v1/execute_action/stream"].map((path) =>
      httpBytes(
        "POST",
        path,
        { "content-type": "application/json", "X-Session-API-Key": server.key },
        JSON.stringify({
          action: { action: name, args: {} }
        })
      )
    )
  )
]

const attack = (n: number, rand: () => number, server: ChaosServer, markerDir: string): Attack => {
  const pick = <A>(list: ReadonlyArray<A>): A => list[Math.floor(rand() * list.length)]!
  const marker = join(markerDir, `pwn-${n}`)
  const json = { "content-type": "application/json" }
  const kind = n % 8
  if (kind <= 2) {
    // Ambiguous paths, no key, bodies that would leave the marker if they ran.
    const endpoint = pick(PROTECTED)
    const method = pick(["POST", "POST", "GET", "PUT"])
    return { bytes: bypass(method, endpoint, pick(ambiguous(endpoint)), marker, markerDir) }
  }
  if (kind === 3) {
    // Missing, wrong or malformed keys on a plain path.
    const body = JSON.stringify({ action: { action: "run", args: { command: `touch ${marker}` } } })
    const keys: ReadonlyArray<Record<string, string>> = [
      {},
      { "X-Session-API-Key": "wrong" },
      { "X-Session-API-Key": "" },
      // Not `${key} `: HTTP strips a field value's surrounding whitespace, so that is the key itself.
      { "X-Session-API-Key": `${server.key}x` },
      { "X-Session-API-Key": server.key.slice(0, -1) },
      { "X-Session-API-Key": server.key.toUpperCase() },
      { "Authorization": "Bearer wrong" },
      { "Authorization": `Basic ${server.key}` },
      { "Authorization": "Bearer " },
      { "X-Session-API-Key": "\u00e9\u00e9" }
    ]
    return { bytes: httpBytes("POST", pick(PROTECTED), { ...json, ...pick(keys) }, body) }
  }
  if (kind === 4) {
    // Malformed bodies with the key: each must be a 4xx, never a 5xx.
    const path = pick(["/execute_action", "/v1/execute_action/stream", "/list_files", "/v1/env", "/update_mcp_server"])
    return {
      bytes: httpBytes("POST", path, { ...json, "X-Session-API-Key": server.key }, pick(malformedBodies(rand)))
    }
  }
  if (kind === 5) {
    // Bad multipart with the key.
    const boundary = "zz"
    const bodies = [
      multipart(boundary, "Content-Disposition: form-data; name=\"other\"\r\n\r\nx"),
      multipart(boundary, "Content-Disposition: form-data; name=\"file\"\r\n\r\nno filename"),
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\nno end`,
      multipart(boundary, `Content-Disposition: form-data; name="file"; filename="${"n".repeat(5000)}"\r\n\r\nx`),
      multipart(
        boundary,
        "Content-Disposition: form-data; name=\"file\"; filename=\"bad.zip\"\r\n\r\nPK\u0003\u0004garbage"
      ),
      "not multipart at all",
      multipart("other", "x")
    ]
    const types = [`multipart/form-data; boundary=${boundary}`, "multipart/form-data", "multipart/form-data; boundary="]
    const destination = pick([
      "",
      "?destination=relative",
      `?destination=${server.workspace}`,
      "?destination=/proc/self"
    ])
    return {
      bytes: httpBytes("POST", `/upload_file${destination}`, {
        "content-type": pick(types),
        "X-Session-API-Key": server.key
      }, pick(bodies))
    }
  }
  if (kind === 6) {
    // Random bytes on the socket.
    const length = 1 + Math.floor(rand() * 2048)
    return { bytes: Buffer.from(Array.from({ length }, () => Math.floor(rand() * 256))) }
  }
  // Header abuse.
  const abuses: ReadonlyArray<() => Buffer> = [
    () => httpBytes("GET", "/alive", { "X-Big": "a".repeat(100_000) }),
    () => httpBytes("GET", "/alive", Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`X-H${i}`, "v"]))),
    () =>
      Buffer.from(
        "POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      ),
    () => Buffer.from("POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
    () => Buffer.from("POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n{"),
    () => Buffer.from("POST /execute_action HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nbad\r\n"),
    () => Buffer.from("GET /alive HTTP/1.1\r\nHost: x\r\nX-Session-API-Key: a\r\n\tfolded\r\n\r\n"),
    () => Buffer.from("GET /alive\r\n\r\n"),
    () => Buffer.from("TRACE /execute_action HTTP/1.1\r\nHost: x\r\n\r\n"),
    () => Buffer.from("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n"),
    () => Buffer.from("get /alive HTTP/1.1\r\nHost: x\r\n\r\n"),
    () => Buffer.from("GET /alive HTTP/9.9\r\nHost: x\r\n\r\n"),
    () =>
      Buffer.from("POST /execute_action HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"),
    () => Buffer.from(`GET /alive HTTP/1.1\r\nHost: x\r\nX-Session-API-Key: ${"k\u0000".repeat(10)}\r\n\r\n`, "latin1"),
    () => httpBytes("POST", "/execute_action", { "content-type": "application/json; charset=utf-7" }, "{}"),
    () => httpBytes("POST", "/execute_action", { "Content-Encoding": "gzip", "X-Session-API-Key": server.key }, "{}"),
    // Keyed, plain requests, which the lean handler takes before Effect's server (server/leanExecute.ts),
    // with their framing abused: a length shorter than the body (the rest read as a next request),
    // a body cut short by the socket's end, and two actions pipelined in one write. `rawRequest`
    // half-closes after writing, so the server drops each connection with the action in flight
    // (nothing is answered): the handler must interrupt what it started and keep serving.
    () => keyedAction(server.key, (length) => length - 7),
    () => keyedAction(server.key, (length) => length + 40),
    () => Buffer.concat([keyedAction(server.key, (length) => length), keyedAction(server.key, (length) => length)])
  ]
  return { bytes: pick(abuses)() }
}

/** A keyed `/execute_action` running `true`, its `Content-Length` set to `declared(the body's length)`. */
const keyedAction = (key: string, declared: (length: number) => number) => {
  const body = JSON.stringify({ action: { action: "run", args: { command: "true", blocking: true } } })
  return Buffer.from(
    `POST /execute_action HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Session-API-Key: ${key}\r\n` +
      `Content-Length: ${declared(Buffer.byteLength(body))}\r\n\r\n${body}`
  )
}

/** The fuzz group: hostile requests to a running server, then requests raced against a server's start. */
export const fuzzRows = async (context: GroupContext): Promise<ReadonlyArray<Row>> => [
  ...await hostileRows(context),
  ...await earlyRequestRows(context.quick ? 2 : 10)
]

const hostileRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const target = quick ? 800 : 10_000
  const server = await startChaosServer()
  const markerDir = mkdtempSync(join(tmpdir(), "chaos-marker-"))
  const rand = random(9)
  let sent = 0
  let fiveHundreds = 0
  const samples: Array<string> = []
  try {
    const before = await keyedRun(server, "echo ready")
    if (before?.includes("ready") !== true) throw new Error(`the server does not run a keyed action: ${before}`)
    const fixed = table(server, markerDir)
    const probe = aliveProbe(server.port)
    // Eight clients at once; each request gets a new connection (connection handling is under attack too).
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (sent < target && !budget.over && alive(server.pid)) {
        const n = sent++
        const bytes = n < fixed.length ? fixed[n]! : attack(n, rand, server, markerDir).bytes
        const reply = await rawRequest(server.port, bytes, 10_000)
        if (reply.status >= 500) {
          fiveHundreds++
          if (samples.length < 5) samples.push(`${reply.status} for ${bytes.subarray(0, 120).toString("latin1")}`)
        }
      }
    }))
    const { maxMs } = await probe.stop()
    for (const sample of samples) console.log(`  5xx: ${JSON.stringify(sample)}`)
    // Commands of a successful bypass may still be finishing: give them a moment to show.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const markerNames = readdirSync(markerDir)
    const markers = markerNames.length
    if (markers > 0) console.log(`  side effects: ${markerNames.slice(0, 10).join(", ")}`)
    const crashed = alive(server.pid) ? 0 : 1
    const after = crashed ? null : await keyedRun(server, "echo still-works")
    // The key must not be readable from inside: no process's environment (the server's included,
    // since its launcher hands the key over on a pipe) may hold it.
    const holders = crashed ? null : await keyedRun(
      server,
      `grep -l -a -F -e '${server.key}' /proc/[0-9]*/environ 2>/dev/null | wc -l`
    )
    return [
      atLeast("fuzz: hostile requests sent", sent, "requests", target),
      atMost("fuzz: 5xx answers", fiveHundreds, "answers", 0),
      atMost("fuzz: unauthenticated side effects (marker files)", markers, "files", 0),
      atMost("fuzz: server crashes", crashed, "crashes", 0),
      atMost("fuzz: max /alive latency during fuzz", maxMs, "ms", 1000),
      atMost("fuzz: keyed action fails afterwards", after?.includes("still-works") === true ? 0 : 1, "failures", 0),
      // A probe that could not run counts as a failure, never as a pass.
      atMost(
        "fuzz: processes whose environment holds the session key",
        holders === null ? Number.POSITIVE_INFINITY : Number(holders.trim()),
        "processes",
        0
      )
    ]
  } finally {
    await server.release()
    if (existsSync(markerDir)) rmSync(markerDir, { recursive: true, force: true })
  }
}
