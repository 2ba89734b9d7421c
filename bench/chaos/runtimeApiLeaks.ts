/**
 * Part of group runtime-api: what the API tells someone without the right key. A `/start` whose
 * `environment` the engine would refuse (an empty name, a name with `=`, a NUL in a value) must
 * be a 400 that never quotes the value (the engine's refusal did, in a 500) and make no
 * container; nor may a body that is not JSON come back in pieces; a `/<runtime_id>/server_info` without the sandbox's key must not tell the host's
 * disk, memory or I/O (`resources`), while the key still gets them. An exited sandbox's last output
 * (`/runtime/{id}`'s `last_output`) reaches the API key's holder only, and cut to 20 lines of at most
 * 300 characters however long a line the sandbox printed.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { call, type Started } from "../../scripts/runtimeApiProcess.ts"
import { atLeast, atMost, type Row, waitFor } from "./rows.ts"

const PIECE = 8

/** The environments the engine would refuse, each holding `secret` in a value. */
const badEnvironments = (secret: string): ReadonlyArray<Record<string, string>> => [
  { "": secret },
  { "A=B": secret },
  { "=": secret },
  { GOOD: "x", TOKEN: `${secret}\0` },
  { [`N\0`]: secret },
  { "1A": secret }
]

/** `/start`s with bad environments: answers not 400, answers quoting a piece of the value, containers made. */
export const startEnvironmentRows = async (
  base: string,
  key: string,
  containerPrefix: string
): Promise<ReadonlyArray<Row>> => {
  const secret = randomBytes(16).toString("hex")
  const pieces = Array.from({ length: secret.length - PIECE + 1 }, (_, i) => secret.slice(i, i + PIECE))
  const environments = badEnvironments(secret)
  let not400 = 0
  let quoting = 0
  let made = 0
  for (const environment of environments) {
    const sessionId = `chaos-env-${randomBytes(5).toString("hex")}`
    const answer = await call(base, "POST", "/start", { key, body: { session_id: sessionId, environment } })
    if (answer.status !== 400) not400++
    if (pieces.some((piece) => JSON.stringify(answer.body).includes(piece))) quoting++
    const containers = spawnSync("docker", ["ps", "-aq", "--filter", `name=^/${containerPrefix}-${sessionId}$`], {
      encoding: "utf8"
    }).stdout.trim()
    if (containers !== "") made++
  }
  // And bodies that are not JSON, the secret first (JSON.parse's message quoted the input's start).
  for (const body of [`${secret} {`, `{"session_id": "x", "environment": {"K": "${secret}"} x}`]) {
    const response = await fetch(`${base}/start`, { method: "POST", headers: { "X-API-Key": key }, body })
    const text = await response.text()
    if (response.status !== 400) not400++
    if (pieces.some((piece) => text.includes(piece))) quoting++
  }
  const of = `(of ${environments.length + 2})`
  return [
    atMost(
      `runtime-api: /start with a bad environment entry or a non-JSON body not answered 400 ${of}`,
      not400,
      "answers",
      0
    ),
    atMost(`runtime-api: of them quoting a piece of the entry's value ${of}`, quoting, "answers", 0),
    atMost(`runtime-api: of them that made a container ${of}`, made, "containers", 0)
  ]
}

/**
 * `/server_info` of `target` (running our server) through the proxy: keyless spellings (none,
 * wrong, the API key, another sandbox's key) must get no `resources`; the sandbox's key must.
 */
export const serverInfoRows = async (
  base: string,
  key: string,
  target: Started,
  other: Started
): Promise<ReadonlyArray<Row>> => {
  const keyless: ReadonlyArray<Record<string, string>> = [
    {},
    { "X-Session-API-Key": "wrong" },
    { "X-API-Key": key },
    { "X-Session-API-Key": other.session_api_key },
    { Authorization: `Bearer ${other.session_api_key}` }
  ]
  const resourcesOf = async (headers: Record<string, string>) => {
    const response = await fetch(`${base}/${target.runtime_id}/server_info`, { headers })
    const body = await response.json() as Record<string, unknown>
    return response.status === 200 && "uptime" in body ? ("resources" in body ? 1 : 0) : -1
  }
  let told = 0
  let unanswered = 0
  for (const headers of keyless) {
    const found = await resourcesOf(headers)
    if (found === 1) told++
    if (found === -1) unanswered++
  }
  const keyed = await resourcesOf({ "X-Session-API-Key": target.session_api_key })
  const of = `(of ${keyless.length})`
  return [
    atMost(`runtime-api: keyless /server_info answers telling the host's resources ${of}`, told, "answers", 0),
    atMost(`runtime-api: keyless /server_info not answered 200 with uptime ${of}`, unanswered, "answers", 0),
    atLeast("runtime-api: /server_info with the sandbox's key tells its resources", keyed === 1 ? 1 : 0, "answers", 1)
  ]
}

/**
 * A sandbox that prints a marker and a 100,000-character line and exits: `/runtime/{id}` with the
 * API key must tell its `last_output` (the marker, at most 20 lines of at most 300 characters and
 * the cut's `...`); without it (none, wrong, the sandbox's own session key, another sandbox's) the
 * answer must be a refusal that does not hold the marker.
 */
export const lastOutputRows = async (
  base: string,
  key: string,
  start: (body: object) => Promise<Started>,
  other: Started
): Promise<ReadonlyArray<Row>> => {
  const marker = `chaos-last-${randomBytes(8).toString("hex")}`
  const script = `console.log(${JSON.stringify(marker)}); console.log("x".repeat(100000)); process.exit(1)`
  const dying = await start({
    session_id: `chaos-last-${randomBytes(5).toString("hex")}`,
    command: ["/opt/effect-sandbox/bin/node", "-e", script]
  })
  const path = `/runtime/${dying.runtime_id}`
  let ended: Record<string, unknown> = {}
  await waitFor(
    async () => {
      ended = (await call(base, "GET", path, { key })).body
      return ended["pod_status"] === "failed"
    },
    60_000,
    250
  )
  const output = String(ended["last_output"] ?? "")
  const lines = output.split("\n")
  const within = output.includes(marker) && lines.length <= 20 && lines.every((line) => line.length <= 303)
  const strangers: ReadonlyArray<Record<string, string>> = [
    {},
    { "X-API-Key": "wrong" },
    { "X-Session-API-Key": dying.session_api_key },
    { "X-API-Key": dying.session_api_key },
    { "X-Session-API-Key": other.session_api_key }
  ]
  let told = 0
  let notRefused = 0
  for (const headers of strangers) {
    const response = await fetch(`${base}${path}`, { headers })
    if ((await response.text()).includes(marker)) told++
    if (response.status !== 401 && response.status !== 403) notRefused++
  }
  const of = `(of ${strangers.length})`
  return [
    atLeast(
      "runtime-api: an exited sandbox's last output told to the API key, cut to 20 lines of 300 characters",
      within ? 1 : 0,
      "answers",
      1
    ),
    atMost(`runtime-api: /runtime/{id} without the API key telling the last output ${of}`, told, "answers", 0),
    atMost(`runtime-api: /runtime/{id} without the API key not refused with 401 or 403 ${of}`, notRefused, "answers", 0)
  ]
}
