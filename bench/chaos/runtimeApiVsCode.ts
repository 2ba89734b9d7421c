/**
 * The runtime-api group's VS Code rows: in proxy mode each sandbox's IDE has a host of its own,
 * `<runtime_id>-<mac>.localhost` on the API's port, guarded by VS Code's connection token in the
 * sandbox, and `/<runtime_id>/vscode?tkn=` only sends the token's holder there
 * (docs/runtime-api.md). Sandboxes C and D run our real action server with `--plugins vscode`, so
 * the real token proxy guards their IDE ports; behind it, in code-server's place, an IDE that
 * records every request and upgrade it gets and serves an attack page (ideAttack.ts: the rows are
 * about what passes the proxies, not about the workbench). Requests and upgrades without C's token,
 * from another origin's page, at a sandbox started without the plugin (A, B), at a forged host or
 * an unknown runtime id must be refused and never reach C's IDE; with the token they must; the IDE
 * must never see the API key or a session key. Then a real Chromium opens D's IDE and C's, and a
 * page of D's IDE origin attacks C's.
 */
import { Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { Started } from "../../scripts/runtimeApiProcess.ts"
import { IMAGE_NODE, IMAGE_SERVER } from "../../src/engines/docker/containerSpec.ts"
import { ideHostLabel } from "../../src/runtimeApi/vscodeHosts.ts"
import { serverCommand } from "../../src/server/commandLine.ts"
import { tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { ideRequest } from "../../test/vscode/ideHttp.ts"
import { browserAttack, RECORDING_IDE } from "./ideAttack.ts"
import { atLeast, atMost, type Row, waitFor } from "./rows.ts"

/** `/start`'s body for C and D: the IDE stand-in written where the server looks for code-server, then our server. */
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
  /** The API's base URL, or an IDE host's origin. */
  readonly base: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly upgrade: boolean
}

/**
 * One request or WebSocket handshake at `base` (the API, or an IDE host); the status answered (101
 * for an upgrade taken, 0 for a connection cut: neither the refusal nor the answer wanted).
 */
const attempt = ({ base, headers, path, upgrade }: Attempt) =>
  ideRequest(`${base}${path}`, { headers, upgrade }).then((answer) => answer.status, () => 0)

/** Each path at `base` as a request and as an upgrade. */
const both = (
  base: string,
  paths: ReadonlyArray<string>,
  headers: ReadonlyArray<Record<string, string>>
): Array<Attempt> =>
  paths.flatMap((path) => headers.flatMap((h) => [false, true].map((upgrade) => ({ base, path, headers: h, upgrade }))))

/** C's token, once C's server answers (before it listens, a published port may take the connection and stall). */
const tokenOf = async (base: string, sandbox: Started) => {
  let token: string | undefined
  const answered = await waitFor(
    async () => {
      const body = await fetch(`${base}/${sandbox.runtime_id}/vscode/connection_token`, {
        headers: { "X-Session-API-Key": sandbox.session_api_key },
        signal: AbortSignal.timeout(5_000)
      }).then((answer) => answer.json()).catch(() => ({})) as { token?: unknown }
      if (typeof body.token === "string") token = body.token
      return token !== undefined
    },
    60_000,
    250
  )
  if (answered === null || token === undefined) {
    throw new Error(`sandbox ${sandbox.runtime_id} never answered a VS Code token`)
  }
  return token
}

/** The origin of `sandbox`'s IDE host on the API at `base`. */
const ideOrigin = (base: string, sandbox: Started) =>
  `http://${ideHostLabel(sandbox.runtime_id, Redacted.make(sandbox.session_api_key))}.localhost:${new URL(base).port}`

export const vscodeRows = async (input: {
  readonly base: string
  readonly key: string
  /** Sandboxes started without the plugin. */
  readonly without: ReadonlyArray<Started>
  /** C and D, started with `vscodeStart`: D attacks C. */
  readonly c: Started
  readonly d: Started
  readonly seenByIde: () => ReadonlyArray<{ kind: string; path: string; headers: Record<string, string> }>
  readonly repeat: number
}): Promise<ReadonlyArray<Row>> => {
  const { base, c, d, key } = input
  const token = await tokenOf(base, c)
  const ide = ideOrigin(base, c)
  const cookie = `${tokenCookieName(token)}=${token}`
  const marker = `chaos-ide-${randomBytes(4).toString("hex")}`

  // No token: C's entry path and C's host with every other credential, or a wrong token; or the
  // token's cookie from a page of another origin (the API's, D's IDE host).
  const noToken = both(base, [`/${c.runtime_id}/vscode/${marker}`, `/${c.runtime_id}/vscode?folder=/${marker}`], [
    {},
    { "X-Session-API-Key": c.session_api_key },
    { "X-API-Key": key },
    { Cookie: `${tokenCookieName(token)}=${token.toUpperCase()}` },
    { Cookie: `vscode-tkn=${token}` },
    { Authorization: `Bearer ${token}` }
  ]).concat(
    both(base, [`/${c.runtime_id}/vscode/${marker}?tkn=${token.slice(1)}`], [{}]),
    both(ide, [`/${marker}`], [
      {},
      { "X-Session-API-Key": c.session_api_key, "X-API-Key": key },
      { Cookie: `vscode-tkn=${token}` },
      { Cookie: `${tokenCookieName(token)}=${input.without[0]!.session_api_key}` },
      { Cookie: cookie, Origin: base },
      { Cookie: cookie, Origin: ideOrigin(base, d) },
      { Cookie: cookie, Origin: "null" },
      { Cookie: cookie, "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors" }
    ])
  )
  // C's token at places that are not C's: the other sandboxes' paths (no plugin), an unknown id,
  // C's runtime id under a forged mac.
  const forged = ide.replace(/-[0-9a-f]{32}\./, `-${"0".repeat(32)}.`)
  const wrongRuntime = both(
    base,
    [...input.without.map((s) => s.runtime_id), "rt-000000000000000000000000"].map((id) =>
      `/${id}/vscode/${marker}?tkn=${token}`
    ),
    [{ Cookie: cookie }]
  ).concat(both(forged, [`/${marker}`], [{ Cookie: cookie, Origin: forged }]))
  let noTokenPassed = 0
  let wrongRuntimePassed = 0
  let sent = 0
  for (let round = 0; round < input.repeat; round++) {
    for (const a of noToken) {
      if ((await attempt(a)) !== 403) noTokenPassed++
      sent++
    }
    for (const a of wrongRuntime) {
      if ((await attempt(a)) !== 404) wrongRuntimePassed++
      sent++
    }
  }
  // With the token: the entry sends the browser to C's host (and sets no cookie on the API's
  // origin); there, the cookie reaches C's IDE from its own page, as a request and as an upgrade.
  const entry = await ideRequest(`${base}/${c.runtime_id}/vscode?tkn=${token}&folder=/workspace`)
  const sentOn = entry.status === 302 && entry.headers.location === `${ide}/?tkn=${token}&folder=/workspace` &&
    entry.headers["set-cookie"] === undefined
  const own = await Promise.all(
    both(ide, [`/own-${marker}`], [{ Cookie: cookie, Origin: ide, "X-API-Key": key }]).map(attempt)
  )

  // The browser: D's IDE, then C's, opened; a page of D's IDE origin attacks C's.
  const attack = await browserAttack({
    victimUrl: `${base}/${c.runtime_id}/vscode?tkn=${token}&folder=/workspace`,
    attackerUrl: `${base}/${d.runtime_id}/vscode?tkn=${await tokenOf(base, d)}&folder=/workspace`,
    token,
    marker
  })
  console.log(`  runtime-api vscode browser: ${JSON.stringify(attack)}`)
  const seen = input.seenByIde()
  const reached = seen.filter((r) => r.path.includes(marker) && !r.path.includes(`own-${marker}`)).length +
    attack.opened
  const ownSeen = seen.filter((r) => r.path === `/own-${marker}`).map((r) => r.kind).sort()
  const keysSeen =
    seen.filter((r) =>
      "x-api-key" in r.headers || "x-session-api-key" in r.headers || JSON.stringify(r.headers).includes(key)
    ).length
  const upgrades = noToken.filter((a) => a.upgrade).length + wrongRuntime.filter((a) => a.upgrade).length
  return [
    atLeast(
      `runtime-api: vscode entry and host requests and upgrades sent (${upgrades * input.repeat} upgrades)`,
      sent,
      "requests",
      noToken.length + wrongRuntime.length
    ),
    atMost(
      `runtime-api: vscode entry or host without the token, or from another origin, not refused with 403 (of ${
        noToken.length * input.repeat
      })`,
      noTokenPassed,
      "answers",
      0
    ),
    atMost(
      `runtime-api: vscode entry of a sandbox without the plugin or unknown, or a forged host, not 404 (of ${
        wrongRuntime.length * input.repeat
      })`,
      wrongRuntimePassed,
      "answers",
      0
    ),
    atMost(
      `runtime-api: of them, and of D's IDE page in Chromium (fetch, WebSocket, iframe), that reached C's IDE (of ${sent})`,
      reached,
      "requests",
      0
    ),
    atLeast(
      "runtime-api: C's token sent on to C's own host, and reaching C's IDE there, request and upgrade",
      sentOn && own.join(",") === "200,101" && ownSeen.join(",") === "http,upgrade" ? 1 : 0,
      "checks",
      1
    ),
    atLeast("runtime-api: Chromium opened C's IDE on its own host (control)", attack.victimOpened, "checks", 1),
    atMost("runtime-api: D's service worker registered over its whole origin", attack.wideWorker, "workers", 0),
    atMost(
      `runtime-api: visits of an app port on 127.0.0.1 carrying C's token (of ${attack.appVisits})`,
      attack.victimTokenAtApp + Number(attack.appVisits < 3),
      "visits",
      0
    ),
    atMost(
      `runtime-api: requests in which the IDE saw the API key or a session key (of ${seen.length})`,
      keysSeen,
      "requests",
      0
    )
  ]
}
