/**
 * The `vscode` plugin of a real action server, with a stand-in for code-server (fixtures/
 * fake-code-server: the real one is in the tools image, tested in test/docker/vscode.test.ts):
 * OpenHands' settings copied, the token on `GET /vscode/connection_token`, OpenVSCode's token check
 * on `VSCODE_PORT` in front of the IDE (HTTP and WebSocket) on the IDE's own `ide-<h>.localhost`
 * host with a cookie named for the token, pages of other origins refused, no
 * `Service-Worker-Allowed` in answers, code-server's port proxy off unless asked for, the IDE gone
 * with the server, and the plugin off (token null, server up) when `VSCODE_PORT` is missing.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, statSync } from "node:fs"
import { connect, createServer } from "node:net"
import { join } from "node:path"
import { ideHostLabel, tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { OPENHANDS_VSCODE_SETTINGS } from "../../src/server/vscode/settings.ts"
import { ideRequest } from "../vscode/ideHttp.ts"
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

const get = (url: string, headers: Record<string, string> = {}) => Effect.promise(() => ideRequest(url, { headers }))

/** A raw WebSocket-style upgrade to `host`'s port: the answer's first line, and what came back after `ping`. */
const upgrade = (port: number, origin: string, headers: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `GET /stable/socket HTTP/1.1\r\nHost: ${
            new URL(origin).host
          }\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("") + "\r\n"
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
  "code-server behind OpenVSCode's connection-token check on a host of its own, with OpenHands' settings, gone with the server",
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
        const own = `http://${ideHostLabel(token)}.localhost:${port}`
        const cookie = `${tokenCookieName(token)}=${token}`
        assert.match(tokenCookieName(token), /^vscode-tkn-[0-9a-f]{12}$/)
        for (const headers of [{}, { cookie: `${tokenCookieName(token)}=wrong` }, { cookie: `vscode-tkn=${token}` }]) {
          const refused = yield* get(`${own}/?folder=/workspace`, headers)
          assert.deepStrictEqual([refused.status, refused.body], [403, "Forbidden."])
        }
        assert.strictEqual((yield* get(`${base}/?tkn=wrong&folder=/workspace`)).status, 403)
        // On a host every local server shares, the token only moves the browser to the IDE's own host.
        for (const shared of [base, `http://localhost:${port}`]) {
          const moved = yield* get(`${shared}/?tkn=${token}&folder=%2Fworkspace`)
          assert.strictEqual(moved.status, 302)
          assert.strictEqual(moved.headers.location, `${own.slice("http:".length)}/?tkn=${token}&folder=%2Fworkspace`)
          assert.isUndefined(moved.headers["set-cookie"])
        }
        // Through a front end, Host is the front end's: the token is taken where it came.
        const forwarded = yield* get(`${base}/?tkn=${token}`, { "x-forwarded-host": "8001-x.tunnel.example" })
        assert.deepStrictEqual([forwarded.status, forwarded.headers.location], [302, "/"])
        const entry = yield* get(`${own}/?tkn=${token}&folder=%2Fworkspace`)
        assert.strictEqual(entry.status, 302)
        assert.strictEqual(entry.headers.location, "/?folder=%2Fworkspace")
        assert.deepStrictEqual(entry.headers["set-cookie"], [`${cookie}; Path=/; HttpOnly; SameSite=Lax`])

        const answer = yield* get(`${own}/?folder=%2Fworkspace`, { cookie })
        assert.isUndefined(answer.headers["service-worker-allowed"], "no answer widens a service worker's scope")
        const ide = JSON.parse(answer.body)
        assert.strictEqual(ide.url, "/?folder=%2Fworkspace")
        assert.strictEqual(ide.cwd, server.workspace)
        assert.isFalse(ide.keyInEnv, "the session key does not reach the IDE")
        assert.deepStrictEqual(ide.argv.slice(0, 2), ["--auth", "none"])
        assert.includeMembers(ide.argv, ["--disable-workspace-trust", "--disable-proxy", server.workspace])
        assert.isTrue(isRunning(ide.pid, "entry.js"))

        // A page of another origin: refused with the cookie, as a fetch and as a WebSocket.
        const foreign = [
          { origin: `http://127.0.0.1:${port + 1}` },
          { origin: `http://${ideHostLabel(token)}.localhost:${port + 1}` },
          { origin: "null" },
          { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" },
          { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" }
        ]
        for (const headers of foreign) {
          assert.strictEqual((yield* get(`${own}/`, { cookie, ...headers })).status, 403, JSON.stringify(headers))
          assert.strictEqual(yield* upgrade(port, own, { cookie, ...headers }), "HTTP/1.1 403 Forbidden")
        }
        // Its own pages, and a navigation from elsewhere, pass.
        for (const headers of [{ origin: own }, { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" }]) {
          assert.strictEqual((yield* get(`${own}/`, { cookie, ...headers })).status, 200, JSON.stringify(headers))
        }
        assert.strictEqual(yield* upgrade(port, own, {}), "HTTP/1.1 403 Forbidden")
        assert.strictEqual(
          yield* upgrade(port, own, { cookie, origin: own }),
          "HTTP/1.1 101 Switching Protocols echoed"
        )
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
  "code-server's port proxy only when asked for (EFFECT_SANDBOX_VSCODE_PORT_PROXY=1)",
  () =>
    Effect.gen(function*() {
      const port = yield* freePort()
      const server = yield* startTestServer({
        tools: { vscode: true },
        env: {
          VSCODE_PORT: String(port),
          EFFECT_SANDBOX_CODE_SERVER: FAKE_CODE_SERVER,
          EFFECT_SANDBOX_VSCODE_PORT_PROXY: "1"
        }
      })
      const { token } = json(yield* call(server, "/vscode/connection_token"))
      const ide = JSON.parse(
        (yield* get(`http://${ideHostLabel(token)}.localhost:${port}/`, {
          cookie: `${tokenCookieName(token)}=${token}`
        })).body
      )
      assert.notInclude(ide.argv, "--disable-proxy")
    }).pipe(Effect.scoped),
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
