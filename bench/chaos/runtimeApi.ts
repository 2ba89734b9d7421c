/**
 * Group runtime-api: `effect-sandbox-runtime-api` in proxy mode, run as its own process
 * (scripts/runtimeApiProcess.ts), with two sandboxes A and B whose servers record every request they
 * receive. Hostile requests at the API (bad keys, bad bodies, huge bodies, path tricks) must get no
 * 5xx and change no sandbox; requests at B's path without B's key in `X-Session-API-Key` must never
 * reach B; and no sandbox may ever see the operator's `X-API-Key` (docs/security.md, "The runtime
 * API server"). A third sandbox C has VS Code: its rows are runtimeApiVsCode.ts's; `/build`'s rows
 * (runtimeApiBuild.ts) aim build steps at sandbox A.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { request } from "node:http"
import { call, removeContainersNamed, startApiServer, type Started } from "../../scripts/runtimeApiProcess.ts"
import { baseImage } from "./ownerProcess.ts"
import { atLeast, atMost, type GroupContext, type Row, waitFor } from "./rows.ts"
import { buildRows } from "./runtimeApiBuild.ts"
import { resourceFactorRows } from "./runtimeApiFactor.ts"
import { lastOutputRows, serverInfoRows, startEnvironmentRows } from "./runtimeApiLeaks.ts"
import { vscodeRows, vscodeStart } from "./runtimeApiVsCode.ts"

/** This group's API server names its containers `<PREFIX>-<session>`: what a failed run leaves is removed by it. */
const PREFIX = "chaos-rapi"

const newSessionId = () => `chaos-${randomBytes(5).toString("hex")}`

/**
 * A sandbox's server, on the action server's port and the first app port (`work-1` in proxy
 * mode): records each request (port, path and headers) as one JSON line, answers 200.
 */
const RECORDER =
  "const fs = require('fs'); for (const port of [60000, 12000]) require('http').createServer((q, r) => { " +
  "fs.appendFileSync('/tmp/seen.log', JSON.stringify({ port, path: q.url, headers: q.headers }) + '\\n'); " +
  "r.end('{}') }).listen(port)"

interface Raw {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

/** A request sent exactly as written (fetch would resolve `..` and re-encode the path). */
const send = (base: string, raw: Raw) =>
  new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const body = raw.body === undefined ? undefined : Buffer.from(raw.body)
    const headers = body === undefined ? raw.headers : { ...raw.headers, "Content-Type": "application/json" }
    request({ hostname, port, path: raw.path, method: raw.method, headers }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    }).on("error", reject).end(body)
  })

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" }).stdout

/** Name and state of every container this API server's prefix names: what a refused request must not change. */
const containerStates = () =>
  docker("ps", "-a", "--filter", `name=${PREFIX}-`, "--format", "{{.Names}} {{.State}}").split("\n").filter((l) => l)
    .sort().join("\n")

/** What sandbox `sid`'s recorder has seen, one parsed line per request. */
const seenBy = (sid: string): ReadonlyArray<{ port: number; path: string; headers: Record<string, string> }> =>
  docker("exec", `${PREFIX}-${sid}`, "cat", "/tmp/seen.log").split("\n").filter((l) => l).map((l) => JSON.parse(l))

/** A `/start` body for a session nobody started. */
const fresh = () => JSON.stringify({ session_id: newSessionId(), image: "ignored" })

/** The hostile requests at the API: every one lacks the right key, or carries a body no endpoint accepts. */
const hostileRequests = (key: string, a: Started, b: Started): ReadonlyArray<Raw> => {
  const target = JSON.stringify({ runtime_id: b.runtime_id })
  const badKeys: ReadonlyArray<Record<string, string>> = [
    {},
    { "X-API-Key": "wrong" },
    { "X-API-Key": key.slice(0, -1) },
    { "X-API-Key": key.slice(1) },
    { "X-API-Key": key.toUpperCase() },
    { "X-API-Key": ` ${key}x` },
    { "X-API-Key": b.session_api_key },
    { "X-Session-API-Key": key },
    { Authorization: `Bearer ${key}` }
  ]
  const withoutKey = badKeys.flatMap((headers): ReadonlyArray<Raw> => [
    { method: "POST", path: "/start", headers, body: fresh() },
    { method: "POST", path: "/stop", headers, body: target },
    { method: "POST", path: "/pause", headers, body: target },
    { method: "GET", path: "/list", headers }
  ])
  const keyed = { "X-API-Key": key }
  const badBodies: ReadonlyArray<Raw> = [
    { method: "POST", path: "/start", headers: keyed, body: "{\"session_id\": " },
    { method: "POST", path: "/start", headers: keyed, body: "[]" },
    { method: "POST", path: "/start", headers: keyed, body: JSON.stringify({ session_id: 5 }) },
    { method: "POST", path: "/start", headers: keyed, body: JSON.stringify({ session_id: "../x", image: [] }) },
    { method: "POST", path: "/stop", headers: keyed, body: JSON.stringify({ runtime_id: [b.runtime_id] }) },
    { method: "POST", path: "/pause", headers: keyed, body: "null" },
    { method: "POST", path: "/start", headers: keyed, body: `{"session_id":"${"x".repeat(4 * 1024 * 1024)}"}` }
  ]
  const paths: ReadonlyArray<Raw> = [
    `/${b.runtime_id}/../list`,
    `/${b.runtime_id}/../stop`,
    `/${a.runtime_id}/../${b.runtime_id}/alive`,
    `/${a.runtime_id}%2f..%2f${b.runtime_id}/alive`,
    `/${a.runtime_id}%2F${b.runtime_id}/alive`,
    `/%2e%2e/list`,
    `/./list`,
    `//list`
  ].map((path) => ({ method: "GET", path, headers: { "X-Session-API-Key": a.session_api_key } }))
  return [...withoutKey, ...badBodies, ...paths]
}

/**
 * Requests at B's paths (its action server, and its first app port through `work-1`) without B's
 * key where the proxy reads it (`X-Session-API-Key`, or `Authorization: Bearer`, which it
 * accepts too): B must never see them.
 */
const strangerRequests = (key: string, a: Started, b: Started, marker: string): ReadonlyArray<Raw> =>
  [
    { "X-Session-API-Key": a.session_api_key },
    { "X-API-Key": key },
    {},
    { "X-API-Key": b.session_api_key },
    { "X-Session-Key": b.session_api_key },
    { Cookie: `session_api_key=${b.session_api_key}` },
    { Authorization: `Basic ${b.session_api_key}` },
    { "X-Session-API-Key": b.session_api_key.toUpperCase() }
  ].flatMap((headers) =>
    [`/${b.runtime_id}/${marker}`, `/${b.runtime_id}/work-1/${marker}`].map((path) => ({
      method: "GET",
      path,
      headers
    }))
  )

export const runtimeApiRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const key = randomBytes(16).toString("hex")
  const server = await startApiServer(["--proxy", "--container-name-prefix", PREFIX], {
    EFFECT_SANDBOX_API_KEY: key,
    SANDBOX_BASE_CONTAINER_IMAGE: baseImage()
  })
  const started: Array<Started> = []
  const sessionB = newSessionId()
  try {
    const start = async (
      sessionId: string,
      body: object = { session_id: sessionId, command: ["/opt/effect-sandbox/bin/node", "-e", RECORDER] }
    ) => {
      const answer = await call(server.base, "POST", "/start", { key, body })
      if (answer.status !== 200) throw new Error(`/start: ${answer.status} ${JSON.stringify(answer.body)}`)
      started.push(answer.body as unknown as Started)
      return answer.body as unknown as Started
    }
    const sessionA = newSessionId()
    const [a, b] = [await start(sessionA), await start(sessionB)]
    const sessionC = newSessionId()
    const c = await start(sessionC, vscodeStart(sessionC))
    const sessionD = newSessionId()
    const d = await start(sessionD, vscodeStart(sessionD))
    for (const s of [a, b]) {
      const alive = {
        method: "GET",
        path: `/${s.runtime_id}/alive`,
        headers: { "X-Session-API-Key": s.session_api_key }
      }
      if (await waitFor(async () => (await send(server.base, alive)) === 200, 60_000, 250) === null) {
        throw new Error(`sandbox ${s.runtime_id} never answered through the proxy`)
      }
    }
    const before = containerStates()

    const hostile = hostileRequests(key, a, b)
    const wanted = quick ? hostile.length : 20 * hostile.length
    let sent = 0
    let serverErrors = 0
    let accepted = 0
    while (sent < wanted && budget.left() > budget.ms * 0.4) {
      const status = await send(server.base, hostile[sent % hostile.length]!)
      if (status >= 500) serverErrors++
      if (status >= 200 && status < 300) accepted++
      sent++
    }
    const changed = containerStates() === before ? 0 : 1
    const listAfter = await call(server.base, "GET", "/list", { key })

    const marker = `chaos-${randomBytes(4).toString("hex")}`
    const strangers = strangerRequests(key, a, b, marker)
    let strangerSent = 0
    let strangerAccepted = 0
    while (strangerSent < (quick ? strangers.length : 20 * strangers.length) && budget.left() > budget.ms * 0.2) {
      const status = await send(server.base, strangers[strangerSent % strangers.length]!)
      if (status !== 403) strangerAccepted++
      strangerSent++
    }
    // B's own key, with the API key beside it: reaches B, which must not see the API key.
    const ownStatus = await send(server.base, {
      method: "GET",
      path: `/${b.runtime_id}/own`,
      headers: { "X-Session-API-Key": b.session_api_key, "X-API-Key": key }
    })
    // And B's app port through work-1: reached, without B's key.
    const ownAppStatus = await send(server.base, {
      method: "GET",
      path: `/${b.runtime_id}/work-1/own-app`,
      headers: { "X-Session-API-Key": b.session_api_key, "X-API-Key": key }
    })
    const seen = seenBy(sessionB)
    const reached = seen.filter((r) => r.path.includes(marker)).length
    const apiKeySeen = seen.filter((r) => "x-api-key" in r.headers || JSON.stringify(r).includes(key)).length
    const appSeen = seen.filter((r) => r.port === 12000)
    const sessionKeySeenByApp = appSeen.filter((r) => JSON.stringify(r.headers).includes(b.session_api_key)).length
    const vscode = await vscodeRows({
      base: server.base,
      key,
      without: [a, b],
      c,
      d,
      seenByIde: () =>
        docker("exec", `${PREFIX}-${sessionC}`, "cat", "/tmp/ide.log").split("\n").filter((l) => l).map((l) =>
          JSON.parse(l)
        ),
      repeat: quick ? 1 : 5
    })
    const leaks = [
      ...(await startEnvironmentRows(server.base, key, PREFIX)),
      ...(await serverInfoRows(server.base, key, c, a)),
      ...(await lastOutputRows(server.base, key, (body) => start("", body), a)),
      ...(await resourceFactorRows(server.base, key, PREFIX))
    ]
    const build = await buildRows({ quick, sandbox: `${PREFIX}-${sessionA}` })
    return [
      ...vscode,
      ...leaks,
      ...build,
      atLeast(`runtime-api: hostile requests sent`, sent, "requests", quick ? hostile.length : 200),
      atMost(`runtime-api: 5xx answers to hostile requests (of ${sent})`, serverErrors, "answers", 0),
      atMost(`runtime-api: hostile requests answered 2xx (of ${sent})`, accepted, "answers", 0),
      atMost("runtime-api: containers created or changed by hostile requests", changed, "changes", 0),
      atLeast("runtime-api: /list with the key answers 200 afterwards", listAfter.status === 200 ? 1 : 0, "answers", 1),
      atLeast("runtime-api: requests at B's path without B's key sent", strangerSent, "requests", strangers.length),
      atMost(`runtime-api: of them not refused with 403 (of ${strangerSent})`, strangerAccepted, "answers", 0),
      atMost(`runtime-api: of them that reached B (of ${strangerSent})`, reached, "requests", 0),
      atLeast(
        "runtime-api: B's own key reaches B",
        ownStatus === 200 && seen.some((r) => r.path.endsWith("/own")) ? 1 : 0,
        "requests",
        1
      ),
      atLeast(
        "runtime-api: B's own key reaches B's app port through work-1",
        ownAppStatus === 200 && appSeen.some((r) => r.path === "/own-app") ? 1 : 0,
        "requests",
        1
      ),
      atMost(`runtime-api: requests in which a sandbox saw X-API-Key (of ${seen.length})`, apiKeySeen, "requests", 0),
      atMost(
        `runtime-api: requests in which an app port saw the session key (of ${appSeen.length})`,
        sessionKeySeenByApp,
        "requests",
        0
      )
    ]
  } finally {
    for (const s of started) {
      await call(server.base, "POST", "/stop", { key, body: { runtime_id: s.runtime_id } }).catch(() => undefined)
    }
    await server.kill()
    removeContainersNamed(PREFIX)
  }
}
