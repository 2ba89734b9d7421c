/**
 * The runtime-api group's VS Code rows: `/<runtime_id>/vscode/...` in proxy mode, which is guarded
 * by VS Code's connection token in the sandbox, not by the session key (docs/runtime-api.md). A
 * sandbox C runs our real action server with `--plugins vscode`, so the real token proxy guards
 * its IDE port; behind it, in code-server's place, an IDE that records every request and upgrade
 * it gets (the rows are about what passes the proxies, not about the workbench). Requests and
 * upgrades without C's token, at a sandbox started without the plugin (A, B), or at an unknown
 * runtime id must be refused and never reach C's IDE; with the token they must; the IDE must
 * never see the API key or a session key.
 */
import { randomBytes } from "node:crypto"
import { request } from "node:http"
import type { Started } from "../../scripts/runtimeApiProcess.ts"
import { IMAGE_NODE, IMAGE_SERVER } from "../../src/layers/docker/containerSpec.ts"
import { serverCommand } from "../../src/server/commandLine.ts"
import { atLeast, atMost, type Row, waitFor } from "./rows.ts"

/** code-server's stand-in: answers its health check on the socket it is given, records everything else. */
const RECORDING_IDE = "const fs = require('fs'); const a = process.argv; " +
  "const log = (kind, q) => fs.appendFileSync('/tmp/ide.log', JSON.stringify({ kind, path: q.url, headers: q.headers }) + '\\n'); " +
  "const s = require('http').createServer((q, r) => { if (q.url !== '/healthz') log('http', q); r.end('ide') }); " +
  "s.on('upgrade', (q, c) => { log('upgrade', q); c.end('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: websocket\\r\\n\\r\\n') }); " +
  "s.listen(a[a.indexOf('--socket') + 1])"

/** `/start`'s body for C: the IDE stand-in written where the server looks for code-server, then our server. */
export const vscodeStart = (sessionId: string) => ({
  session_id: sessionId,
  command: [
    "/bin/sh",
    "-c",
    "mkdir -p /tmp/ide/out/node && printf '%s' \"$RECORDING_IDE\" > /tmp/ide/out/node/entry.js && exec \"$0\" \"$@\"",
    ...serverCommand({
      node: IMAGE_NODE,
      entry: IMAGE_SERVER,
      port: 60000,
      workingDir: "/workspace",
      host: "0.0.0.0",
      username: "openhands",
      userId: 1000,
      tools: { vscode: true },
      restrictToWorkspace: true
    })
  ],
  environment: { RECORDING_IDE, EFFECT_SANDBOX_CODE_SERVER: "/tmp/ide" }
})

interface Attempt {
  readonly path: string
  readonly headers: Record<string, string>
  readonly upgrade: boolean
}

/** One request or WebSocket handshake sent as written; the status answered (101 for an upgrade taken). */
const attempt = (base: string, { headers, path, upgrade }: Attempt) =>
  new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const handshake = upgrade
      ? {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": randomBytes(16).toString("base64")
      }
      : {}
    const sent = request({ hostname, port, path, headers: { ...handshake, ...headers } })
    sent.on("upgrade", (_answer, socket) => {
      socket.destroy()
      resolve(101)
    })
    sent.on("response", (answer) => {
      answer.resume()
      // An answer cut short is an error of the group, not a wait for ever.
      answer.on("end", () => resolve(answer.statusCode ?? 0)).on("error", reject)
    })
    sent.setTimeout(30_000, () => sent.destroy(new Error(`${path}: no answer within 30 s`)))
    sent.on("error", reject).end()
  })

/** Each path as a request and as an upgrade. */
const both = (paths: ReadonlyArray<string>, headers: ReadonlyArray<Record<string, string>>): Array<Attempt> =>
  paths.flatMap((path) => headers.flatMap((h) => [false, true].map((upgrade) => ({ path, headers: h, upgrade }))))

export const vscodeRows = async (input: {
  readonly base: string
  readonly key: string
  /** Sandboxes started without the plugin. */
  readonly without: ReadonlyArray<Started>
  /** C, started with `vscodeStart`. */
  readonly c: Started
  readonly seenByIde: () => ReadonlyArray<{ kind: string; path: string; headers: Record<string, string> }>
  readonly repeat: number
}): Promise<ReadonlyArray<Row>> => {
  const { base, c, key } = input
  const tokenPath = `/${c.runtime_id}/vscode/connection_token`
  let token: string | undefined
  // Until C's server answers (before it listens, a published port may take the connection and stall).
  const answered = await waitFor(
    async () => {
      const body = await fetch(`${base}${tokenPath}`, {
        headers: { "X-Session-API-Key": c.session_api_key },
        signal: AbortSignal.timeout(5_000)
      }).then((answer) => answer.json()).catch(() => ({})) as { token?: unknown }
      if (typeof body.token === "string") token = body.token
      return token !== undefined
    },
    60_000,
    250
  )
  if (answered === null || token === undefined) {
    throw new Error(`sandbox ${c.runtime_id} never answered a VS Code token`)
  }
  const marker = `chaos-ide-${randomBytes(4).toString("hex")}`

  // No token: C's path with every other credential, or a wrong token.
  const noToken = both([`/${c.runtime_id}/vscode/${marker}`, `/${c.runtime_id}/vscode?folder=/${marker}`], [
    {},
    { "X-Session-API-Key": c.session_api_key },
    { "X-API-Key": key },
    { Cookie: `vscode-tkn=${token.toUpperCase()}` },
    { Cookie: `vscode-tkn=${input.without[0]!.session_api_key}` },
    { Authorization: `Bearer ${token}` }
  ]).concat(both([`/${c.runtime_id}/vscode/${marker}?tkn=${token.slice(1)}`], [{}]))
  // C's token at paths that are not C's: the other sandboxes' (no plugin), an unknown id.
  const wrongRuntime = both(
    [...input.without.map((s) => s.runtime_id), "rt-000000000000000000000000"].map((id) =>
      `/${id}/vscode/${marker}?tkn=${token}`
    ),
    [{ Cookie: `vscode-tkn=${token}` }]
  )
  let noTokenPassed = 0
  let wrongRuntimePassed = 0
  let sent = 0
  for (let round = 0; round < input.repeat; round++) {
    for (const a of noToken) {
      if ((await attempt(base, a)) !== 403) noTokenPassed++
      sent++
    }
    for (const a of wrongRuntime) {
      if ((await attempt(base, a)) !== 404) wrongRuntimePassed++
      sent++
    }
  }
  // With the token (as a cookie): reaches C's IDE, as a request and as an upgrade.
  const own = await Promise.all(
    both([`/${c.runtime_id}/vscode/own-${marker}`], [{ Cookie: `vscode-tkn=${token}`, "X-API-Key": key }]).map((a) =>
      attempt(base, a)
    )
  )
  const seen = input.seenByIde()
  const reached = seen.filter((r) => r.path.includes(marker) && !r.path.includes(`own-${marker}`)).length
  const ownSeen = seen.filter((r) => r.path === `/own-${marker}`).map((r) => r.kind).sort()
  const keysSeen =
    seen.filter((r) =>
      "x-api-key" in r.headers || "x-session-api-key" in r.headers || JSON.stringify(r.headers).includes(key)
    ).length
  const upgrades = noToken.filter((a) => a.upgrade).length + wrongRuntime.filter((a) => a.upgrade).length
  return [
    atLeast(
      `runtime-api: vscode path requests and upgrades sent (${upgrades * input.repeat} upgrades)`,
      sent,
      "requests",
      noToken.length + wrongRuntime.length
    ),
    atMost(
      `runtime-api: vscode path without the token not refused with 403 (of ${noToken.length * input.repeat})`,
      noTokenPassed,
      "answers",
      0
    ),
    atMost(
      `runtime-api: vscode path of a sandbox without the plugin or unknown, not 404 (of ${
        wrongRuntime.length * input.repeat
      })`,
      wrongRuntimePassed,
      "answers",
      0
    ),
    atMost(`runtime-api: of them that reached C's IDE (of ${sent})`, reached, "requests", 0),
    atLeast(
      "runtime-api: C's token reaches C's IDE, request and upgrade",
      own.join(",") === "200,101" && ownSeen.join(",") === "http,upgrade" ? 1 : 0,
      "checks",
      1
    ),
    atMost(
      `runtime-api: requests in which the IDE saw the API key or a session key (of ${seen.length})`,
      keysSeen,
      "requests",
      0
    )
  ]
}
