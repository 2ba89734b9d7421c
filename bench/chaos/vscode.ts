/**
 * The `vscode` plugin's port (src/server/vscode) is reachable wherever the action server is, and
 * hands whoever passes its gate an IDE with a terminal: only the connection token may open it,
 * only from the IDE's own origin. Two servers A and B run the plugin, each before a stand-in for
 * code-server that records what passes the gate (ideAttack.ts; the gate is what is under attack
 * here, the real IDE is tested on the tools image in test/docker/vscode.test.ts). B's port is
 * probed without its token; then in a real Chromium that opened B's IDE, a page A's IDE serves
 * attacks B, and the browser visits a server on other ports of 127.0.0.1 (an agent's app port).
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ideBase, tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { ideRequest } from "../../test/vscode/ideHttp.ts"
import { browserAttack, RECORDING_IDE } from "./ideAttack.ts"
import { atLeast, atMost, type Row } from "./rows.ts"
import { type ChaosServer, startChaosServer } from "./server.ts"

/** The status of a plain GET (0: no answer). */
const status = (url: string, headers: Record<string, string>) =>
  ideRequest(url, { headers }).then((answer) => answer.status, () => 0)

/** The status line of a WebSocket upgrade (101 means it reached the IDE). */
const upgradeStatus = (port: number, target: string, headers: Record<string, string>) =>
  new Promise<number>((resolve) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write(
        `GET ${target} HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          Object.entries({ Host: `127.0.0.1:${port}`, ...headers }).map(([n, v]) => `${n}: ${v}\r\n`).join("") + "\r\n"
      ))
    socket.setTimeout(5_000, () => socket.destroy())
    socket.once("data", (chunk) => {
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString("latin1"))?.[1] ?? 0))
      socket.destroy()
    })
    socket.on("error", () => resolve(0)).on("close", () => resolve(0))
  })

/** A port free right now (VSCODE_PORT is a fixed port, as OpenHands passes it). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

interface Ide {
  readonly server: ChaosServer
  readonly port: number
  readonly token: string
  /** The IDE's own origin (`ide-<h>.localhost`), and its URL with the token on 127.0.0.1 (where it is sent on from). */
  readonly origin: string
  readonly url: string
  readonly seen: () => ReadonlyArray<{ readonly path: string }>
}

/** A server with the plugin, before the recording stand-in in `dir`. */
const startIde = async (dir: string): Promise<Ide> => {
  const codeServer = join(dir, "code-server")
  mkdirSync(join(codeServer, "out", "node"), { recursive: true })
  writeFileSync(join(codeServer, "out", "node", "entry.js"), RECORDING_IDE)
  const log = join(dir, "ide.log")
  const port = await freePort()
  const server = await startChaosServer({
    tools: { vscode: true },
    env: { VSCODE_PORT: String(port), EFFECT_SANDBOX_CODE_SERVER: codeServer, IDE_LOG: log }
  })
  const reply = await fetch(`http://127.0.0.1:${server.port}/vscode/connection_token`, {
    headers: { "x-session-api-key": server.key }
  })
  const token = String(((await reply.json()) as { token?: unknown }).token)
  const origin = ideBase(`http://127.0.0.1:${port}`, token)
  const seen = () => {
    try {
      return readFileSync(log, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l) as { path: string })
    } catch {
      return []
    }
  }
  return { server, port, token, origin, url: `http://127.0.0.1:${port}/?tkn=${token}&folder=/workspace`, seen }
}

/** B's port without B's token, as requests and upgrades: the number that passed, and their statuses. */
const gateProbes = async (b: Ide) => {
  const { port, token } = b
  const name = tokenCookieName(token)
  const near = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0")
  const own = new URL(b.origin).host
  const http: ReadonlyArray<readonly [string, Record<string, string>]> = [
    ["/", {}],
    ["/?tkn=", {}],
    [`/?tkn=${near}`, {}],
    [`/?tkn=${token.toUpperCase()}`, {}],
    [`/?TKN=${token}`, {}],
    [`/?tkn=${token}%00`, {}],
    [`/?tkn=${token.slice(0, 8)}`, {}],
    ["/", { cookie: `${name}=` }],
    ["/", { cookie: `${name}=${near}` }],
    ["/", { cookie: `x${name}=${token}` }],
    ["/", { cookie: `${name}=${token}x` }],
    ["/", { cookie: `vscode-tkn=${token}` }],
    ["/", { "x-session-api-key": b.server.key }],
    ["/", { authorization: `Bearer ${token}` }],
    // The token's cookie, from a page of another origin.
    ["/", { host: own, cookie: `${name}=${token}`, origin: `http://127.0.0.1:${port + 1}` }],
    ["/", { host: own, cookie: `${name}=${token}`, "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" }]
  ]
  const statuses = await Promise.all(http.map(([path, headers]) => status(`http://127.0.0.1:${port}${path}`, headers)))
  const upgrades = await Promise.all([
    upgradeStatus(port, "/", {}),
    upgradeStatus(port, `/?tkn=${token}`, {}),
    upgradeStatus(port, "/", { Cookie: `${name}=${near}` }),
    upgradeStatus(port, "/", { Host: own, Cookie: `${name}=${token}`, Origin: `http://127.0.0.1:${port}` }),
    upgradeStatus(port, "/", { Host: own, Cookie: `${name}=${token}`, Origin: "null" })
  ])
  const all = [...statuses, ...upgrades]
  // The control: the token itself does open it, from the IDE's own origin (else the rows prove nothing).
  const control = await Promise.all([
    status(`${b.origin}/`, { cookie: `${name}=${token}` }),
    upgradeStatus(port, "/", { Host: own, Cookie: `${name}=${token}`, Origin: b.origin })
  ])
  console.log(`  vscode gate: ${all.length} probes -> ${all.join(", ")}; with the token: ${control.join(", ")}`)
  return { probes: all.length, opened: all.filter((s) => s !== 403).length + Number(control.join() !== "200,101") }
}

/**
 * Refused upgrades whose client resets the connection as the refusal arrives (a killed browser):
 * the upgraded socket is no longer the HTTP server's to watch, so an unhandled reset would end the
 * action server. Whether the server and the gate both still answer afterwards.
 */
const resetProbes = async (b: Ide, count: number) => {
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve) => {
      const socket = connect(b.port, "127.0.0.1", () =>
        socket.write(
          `GET / HTTP/1.1\r\nHost: 127.0.0.1:${b.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`
        ))
      socket.once("data", () => socket.resetAndDestroy())
      socket.on("error", () => resolve()).on("close", () => resolve())
    })
  }
  const alive = await fetch(`http://127.0.0.1:${b.server.port}/alive`).then((r) => r.status, () => 0)
  const gate = await status(`http://127.0.0.1:${b.port}/`, {})
  console.log(`  vscode resets: ${count} refused upgrades reset; then /alive ${alive}, the gate ${gate}`)
  return Number(alive !== 200 || gate !== 403)
}

export const vscodeRows = async (): Promise<ReadonlyArray<Row>> => {
  const dir = mkdtempSync(join(tmpdir(), "chaos-vscode-"))
  const ides: Array<Ide> = []
  try {
    for (const name of ["a", "b"]) ides.push(await startIde(join(dir, name)))
    const [a, b] = ides as [Ide, Ide]
    const gate = await gateProbes(b)
    const resets = 20
    const downAfterResets = await resetProbes(b, resets)
    const marker = `chaos-ide-${randomBytes(4).toString("hex")}`
    const attack = await browserAttack({ victimUrl: b.url, attackerUrl: a.url, token: b.token, marker })
    const reached = b.seen().filter((r) => r.path.includes(marker)).length
    console.log(`  vscode browser: ${JSON.stringify(attack)}; B's IDE saw ${reached} of A's requests`)
    return [
      atMost(
        `vscode: requests without the connection token, or from another origin, that reached the IDE (of ${gate.probes}), or the token refused`,
        gate.opened,
        "requests",
        0
      ),
      atMost(
        `vscode: the server or its gate not answering after ${resets} refused upgrades the client reset`,
        downAfterResets,
        "servers",
        0
      ),
      atLeast("vscode: Chromium opened B's IDE on a host of its own (control)", attack.victimOpened, "checks", 1),
      atMost(
        "vscode: A's IDE page reaching B's IDE in that browser (fetch, WebSocket, iframe), requests past B's gate or opened",
        reached + attack.opened,
        "requests",
        0
      ),
      atMost(
        "vscode: A's service worker registered over its whole origin from a sub-path",
        attack.wideWorker,
        "workers",
        0
      ),
      atMost(
        `vscode: visits of an app port on 127.0.0.1 carrying B's token (of ${attack.appVisits})`,
        attack.victimTokenAtApp + Number(attack.appVisits < 3),
        "visits",
        0
      )
    ]
  } finally {
    for (const ide of ides) await ide.server.release()
    rmSync(dir, { recursive: true, force: true })
  }
}
