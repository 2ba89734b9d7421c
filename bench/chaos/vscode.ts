/**
 * The `vscode` plugin's port (src/server/vscode) is reachable wherever the action server is, and
 * hands whoever passes its gate an IDE with a terminal: only the connection token may open it.
 * The IDE behind the gate is the test suite's stand-in for code-server (the gate is what is under
 * attack here; the real IDE is tested on the tools image in test/docker/vscode.test.ts).
 */
import { connect, createServer } from "node:net"
import { join } from "node:path"
import { atMost, type Row } from "./rows.ts"
import { startChaosServer } from "./server.ts"

const FAKE_CODE_SERVER = join(import.meta.dirname, "..", "..", "test", "server", "fixtures", "fake-code-server")

/** The status of a plain GET (0: no answer). */
const status = (url: string, headers: Record<string, string>) =>
  fetch(url, { headers, redirect: "manual", signal: AbortSignal.timeout(5_000) }).then(async (response) => {
    await response.arrayBuffer()
    return response.status
  }, () => 0)

/** The status line of a WebSocket upgrade (101 means it reached the IDE). */
const upgradeStatus = (port: number, target: string, cookie: string | undefined) =>
  new Promise<number>((resolve) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          (cookie === undefined ? "" : `Cookie: ${cookie}\r\n`) + "\r\n"
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

export const vscodeRows = async (): Promise<ReadonlyArray<Row>> => {
  const port = await freePort()
  const server = await startChaosServer({
    tools: { vscode: true },
    env: { VSCODE_PORT: String(port), EFFECT_SANDBOX_CODE_SERVER: FAKE_CODE_SERVER }
  })
  try {
    const reply = await fetch(`http://127.0.0.1:${server.port}/vscode/connection_token`, {
      headers: { "x-session-api-key": server.key }
    })
    const token = String(((await reply.json()) as { token?: unknown }).token)
    const base = `http://127.0.0.1:${port}`
    const near = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0")
    const http: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["/", {}],
      ["/?tkn=", {}],
      [`/?tkn=${near}`, {}],
      [`/?tkn=${token.toUpperCase()}`, {}],
      [`/?TKN=${token}`, {}],
      [`/?tkn=${token}%00`, {}],
      [`/?tkn=${token.slice(0, 8)}`, {}],
      ["/", { cookie: "vscode-tkn=" }],
      ["/", { cookie: `vscode-tkn=${near}` }],
      ["/", { cookie: `xvscode-tkn=${token}` }],
      ["/", { cookie: `vscode-tkn=${token}x` }],
      ["/", { "x-session-api-key": server.key }],
      ["/", { authorization: `Bearer ${token}` }]
    ]
    const httpStatuses = await Promise.all(http.map(([path, headers]) => status(`${base}${path}`, headers)))
    const upgrades = await Promise.all([
      upgradeStatus(port, "/", undefined),
      upgradeStatus(port, `/?tkn=${token}`, undefined),
      upgradeStatus(port, "/", `vscode-tkn=${near}`)
    ])
    const opened = httpStatuses.filter((s) => s !== 403).length + upgrades.filter((s) => s !== 403).length
    // The control: the token itself does open it (else the rows above would prove nothing).
    const control = await status(`${base}/`, { cookie: `vscode-tkn=${token}` })
    console.log(
      `  vscode gate: ${http.length + upgrades.length} probes -> ${[...httpStatuses, ...upgrades].join(", ")}; ` +
        `with the token: ${control}`
    )
    return [
      atMost(
        `vscode: requests without the connection token that reached the IDE (of ${
          http.length + upgrades.length
        }), or the token refused`,
        opened + Number(control !== 200),
        "requests",
        0
      )
    ]
  } finally {
    await server.release()
  }
}
