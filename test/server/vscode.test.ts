/**
 * The `vscode` plugin of a real action server, with a stand-in for code-server (fixtures/
 * fake-code-server: the real one is in the tools image, tested in test/docker/vscode.test.ts):
 * OpenHands' settings copied, the token on `GET /vscode/connection_token`, OpenVSCode's token check
 * on `VSCODE_PORT` in front of the IDE (HTTP and WebSocket), the IDE gone with the server, and the
 * plugin off (token null, server up) when `VSCODE_PORT` is missing.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, statSync } from "node:fs"
import { connect, createServer } from "node:net"
import { join } from "node:path"
import { OPENHANDS_VSCODE_SETTINGS } from "../../src/server/vscode/settings.ts"
import { assertAlive, call, isRunning, json, startTestServer } from "./helpers.ts"

const FAKE_CODE_SERVER = join(import.meta.dirname, "fixtures", "fake-code-server")

/** A port free right now (the test's own probe: the server must be told a fixed VSCODE_PORT). */
const freePort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
  )

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers, redirect: "manual" })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

/** A raw WebSocket-style upgrade: the answer's first line, and what came back after `ping`. */
const upgrade = (port: number, cookie: string | undefined) =>
  Effect.promise(() =>
    new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `GET /stable/socket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            (cookie === undefined ? "" : `Cookie: ${cookie}\r\n`) + "\r\n"
        )
      })
      let seen = ""
      socket.on("data", (chunk) => {
        seen += chunk.toString("latin1")
        if (seen.includes("\r\n\r\n") && seen.startsWith("HTTP/1.1 101") && !seen.endsWith("ping")) socket.write("ping")
        if (seen.endsWith("ping") || seen.startsWith("HTTP/1.1 403")) socket.end()
      })
      socket.on("close", () => resolve(`${seen.split("\r\n")[0]} ${seen.endsWith("ping") ? "echoed" : ""}`.trim()))
    })
  )

it.live(
  "code-server behind OpenVSCode's connection-token check, with OpenHands' settings, gone with the server",
  () =>
    Effect.gen(function*() {
      const port = yield* freePort()
      const { token, pid } = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* startTestServer({
          tools: { vscode: true },
          env: { VSCODE_PORT: String(port), EFFECT_SANDBOX_CODE_SERVER: FAKE_CODE_SERVER }
        })
        const settings = join(server.workspace, ".vscode", "settings.json")
        assert.strictEqual(readFileSync(settings, "utf8"), OPENHANDS_VSCODE_SETTINGS)
        assert.strictEqual(statSync(settings).mode & 0o777, 0o644)

        const reply = yield* call(server, "/vscode/connection_token")
        const { token } = json(reply)
        assert.match(token, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        assert.strictEqual((yield* call(server, "/vscode/connection_token", { auth: false })).status, 403)

        const base = `http://127.0.0.1:${port}`
        for (const headers of [{}, { cookie: "vscode-tkn=wrong" }]) {
          const refused = yield* get(`${base}/?folder=/workspace`, headers)
          assert.deepStrictEqual([refused.status, refused.text], [403, "Forbidden."])
        }
        assert.strictEqual((yield* get(`${base}/?tkn=wrong&folder=/workspace`)).status, 403)
        const entry = yield* get(`${base}/?tkn=${token}&folder=%2Fworkspace`)
        assert.strictEqual(entry.status, 302)
        assert.strictEqual(entry.headers.get("location"), "/?folder=%2Fworkspace")
        assert.strictEqual(entry.headers.get("set-cookie"), `vscode-tkn=${token}; Path=/; HttpOnly; SameSite=Strict`)

        const ide = json({ ...(yield* get(`${base}/?folder=%2Fworkspace`, { cookie: `vscode-tkn=${token}` })) } as any)
        assert.strictEqual(ide.url, "/?folder=%2Fworkspace")
        assert.strictEqual(ide.cwd, server.workspace)
        assert.isFalse(ide.keyInEnv, "the session key does not reach the IDE")
        assert.deepStrictEqual(ide.argv.slice(0, 2), ["--auth", "none"])
        assert.includeMembers(ide.argv, ["--disable-workspace-trust", server.workspace])
        assert.isTrue(isRunning(ide.pid, "entry.js"))

        assert.strictEqual(yield* upgrade(port, undefined), "HTTP/1.1 403 Forbidden")
        assert.strictEqual(yield* upgrade(port, `vscode-tkn=${token}`), "HTTP/1.1 101 Switching Protocols echoed")
        return { token, pid: ide.pid as number }
      }))
      assert.isString(token)
      assert.isFalse(isRunning(pid, "entry.js"), "code-server is gone with its server")
      const closed = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then(() => "open", () => "closed"))
      assert.strictEqual(closed, "closed")
    }),
  60_000
)

it.live(
  "without VSCODE_PORT the plugin is off: the token is null and the server runs on",
  () =>
    Effect.gen(function*() {
      const server = yield* startTestServer({
        tools: { vscode: true },
        env: { EFFECT_SANDBOX_CODE_SERVER: FAKE_CODE_SERVER }
      })
      assert.deepStrictEqual(json(yield* call(server, "/vscode/connection_token")), { token: null })
      yield* assertAlive(server)
    }).pipe(Effect.scoped),
  60_000
)
