/**
 * VS Code on RemoteRuntime through our runtime API in proxy mode (Docker provisioner, the tools
 * image's runtime image that DockerRuntime's VS Code test builds too): `--plugins vscode` in the
 * command RemoteRuntime sends, `VSCODE_PORT` set by the API, and `info.urls.vscode` in OpenHands'
 * path mode, `<api>/<runtime_id>/vscode?tkn=..&folder=..`. A real Chromium loads the workbench
 * through the API's proxy (its WebSockets included; screenshot `.tmp/test-output/remote-vscode-workbench.png`);
 * a WebSocket handshake through the proxy reaches code-server; without the token the sandbox
 * answers 403; another sandbox's path (started without the plugin) and an unknown runtime id reach
 * nothing. Release stops the runtime: no container of the file is left. The first describe block
 * checks the pieces that need no engine.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { type IncomingHttpHeaders, request } from "node:http"
import { DockerEngine, ImageBuilder } from "../../src/docker.ts"
import { Runtime } from "../../src/index.ts"
import { remoteVsCodeBase, startRequest } from "../../src/layers/RemoteRuntime.ts"
import { sandboxPod } from "../../src/runtimeApi/kubernetesPods.ts"
import { servesVsCode, withVsCodePort } from "../../src/runtimeApi/vscodePlugin.ts"
import { vscodeTarget } from "../../src/runtimeApi/vscodeProxy.ts"
import { sandboxConfigFromEnv } from "../../src/schema/SandboxConfig.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { dockerCli } from "../docker/helpers.ts"
import { describeDocker, toolsImage } from "../docker/infra.ts"
import { expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../vscode/workbench.ts"
import {
  type ApiServer,
  apiServerLayer,
  call,
  newSessionId,
  removeLeftovers,
  sessionContainers,
  startApiServer,
  type Started
} from "./apiServer.ts"

const RUNTIME_ID = "rt-0123456789abcdef01234567"

/** A `/start` body with `command`. */
const start = (command?: Array<string>) => ({ session_id: "s", ...(command === undefined ? {} : { command }) })

describe("VS Code on the runtime API: the plugin, the environment, the path", () => {
  it("reads the plugin off --plugins (nargs +), and only serves it when the API can", () => {
    assert.isTrue(servesVsCode(start(["node", "server", "--plugins", "jupyter", "vscode", "--no-x"]), true))
    assert.isTrue(servesVsCode(start(["node", "server", "--plugins=vscode"]), true))
    assert.isFalse(servesVsCode(start(["node", "server", "--plugins", "jupyter", "--x", "vscode"]), true))
    assert.isFalse(servesVsCode(start(["node", "server", "--plugins", "vscode"]), false))
    assert.isFalse(servesVsCode(start(), true))
    assert.deepStrictEqual(withVsCodePort({ A: "1", VSCODE_PORT: "9" }, true), { A: "1", VSCODE_PORT: "8001" })
    assert.deepStrictEqual(withVsCodePort({ A: "1", VSCODE_PORT: "9" }, false), { A: "1" })
  })

  it("takes /<runtime_id>/vscode... but the action server's /vscode/connection_token", () => {
    assert.deepStrictEqual(vscodeTarget(`/${RUNTIME_ID}/vscode?tkn=t&folder=/workspace`), {
      runtimeId: RUNTIME_ID,
      prefix: `/${RUNTIME_ID}/vscode`,
      rest: "/?tkn=t&folder=/workspace"
    })
    assert.strictEqual(vscodeTarget(`/${RUNTIME_ID}/vscode`)?.rest, "/")
    assert.strictEqual(
      vscodeTarget(`/${RUNTIME_ID}/vscode/stable-1/static/Out%20x/@a.js`)?.rest,
      "/stable-1/static/Out%20x/@a.js"
    )
    assert.isUndefined(vscodeTarget(`/${RUNTIME_ID}/vscode/connection_token`))
    assert.strictEqual(vscodeTarget(`/${RUNTIME_ID}/vscode/connection_tokens`)?.rest, "/connection_tokens")
    assert.isUndefined(vscodeTarget(`/${RUNTIME_ID}/vscodex`))
    assert.isUndefined(vscodeTarget(`/${RUNTIME_ID}/work-1/vscode`))
    assert.isUndefined(vscodeTarget(`/rt-1/vscode`))
  })

  it("RemoteRuntime sends the plugin, not the port, and puts the URL where OpenHands' client does", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxConfigFromEnv
      const body = startRequest("img", { vscode: true }, sandbox, "sid", Redacted.make("k"))
      assert.includeMembers(body.command.slice(body.command.indexOf("--plugins")), ["--plugins", "vscode"])
      assert.notProperty(body.environment, "VSCODE_PORT")
      assert.deepStrictEqual(remoteVsCodeBase(`http://api:8000/${RUNTIME_ID}`, RUNTIME_ID), {
        base: `http://api:8000/${RUNTIME_ID}/vscode`,
        path: ""
      })
      assert.deepStrictEqual(remoteVsCodeBase("https://rt-x.runtime.example.com", "rt-x"), {
        base: "https://vscode-rt-x.runtime.example.com",
        path: "/"
      })
    }).pipe(Effect.runSync))

  it("a Kubernetes sandbox declares VS Code's port only with the plugin", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxConfigFromEnv
      const pod = (vscode: boolean) =>
        sandboxPod({
          request: {
            session_id: "s",
            command: ["node", "server", "--plugins", "vscode"],
            environment: { VSCODE_PORT: "9" }
          },
          image: "img",
          labels: {},
          claimName: "pvc",
          keySecret: "secret",
          keySha256: "0".repeat(64),
          options: {},
          sandbox,
          vscode
        }).template.spec!.containers[0]!
      const on = pod(true)
      assert.deepInclude(on.ports!, { name: "vscode", containerPort: 8001 })
      assert.deepInclude(on.env!, { name: "VSCODE_PORT", value: "8001" })
      const off = pod(false)
      assert.isFalse(off.ports!.some((p) => p.containerPort === 8001))
      assert.isFalse(off.env!.some((e) => e.name === "VSCODE_PORT"))
    }).pipe(Effect.runSync))
})

const KEY = randomBytes(16).toString("hex")
const servers: Array<ApiServer> = []

/** The tools image's runtime image for uid 1000 `openhands`: DockerRuntime's VS Code test builds the same one. */
const toolsRuntimeImage = Effect.gen(function*() {
  return yield* (yield* ImageBuilder).ensure({ baseImage: toolsImage(), userId: 1000, username: "openhands" })
}).pipe(Effect.provide(ImageBuilder.layer), Effect.provide(DockerEngine.layer), Effect.orDie)

/** RFC 6455's answer to `key`: a 101 carrying it came from a WebSocket server that read this handshake. */
const acceptOf = (key: string) =>
  createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64")

/** A WebSocket handshake at `path` of the API server, as a browser sends it: the status, and whether a 101 answered this key. */
const upgrade = (base: string, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<{ status: number; accepted: boolean; headers: IncomingHttpHeaders }>((resolve, reject) => {
      const key = randomBytes(16).toString("base64")
      const { hostname, port } = new URL(base)
      const sent = request({
        hostname,
        port,
        path,
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": key,
          ...headers
        }
      })
      sent.on("upgrade", (answer, socket) => {
        socket.destroy()
        resolve({
          status: 101,
          accepted: answer.headers["sec-websocket-accept"] === acceptOf(key),
          headers: answer.headers
        })
      })
      sent.on("response", (answer) => {
        answer.resume()
        resolve({ status: answer.statusCode ?? 0, accepted: false, headers: answer.headers })
      })
      sent.on("error", reject)
      sent.end()
    })
  )

describeDocker("RemoteRuntime with vscode through effect-sandbox-runtime-api --proxy", () => {
  afterAll(async () => {
    for (const server of servers.splice(0)) await server.kill()
    removeLeftovers()
  })

  it.live.skipIf(!chromiumAvailable())(
    "the workbench loads through the proxy; WebSockets pass; no token, another sandbox's path and an unknown id do not",
    () =>
      Effect.gen(function*() {
        const image = yield* toolsRuntimeImage
        const server = yield* Effect.promise(() => startApiServer(["--proxy"], KEY))
        servers.push(server)
        const sid = newSessionId()
        const other = newSessionId()
        const layer = apiServerLayer(server.base, KEY, sid, { image, vscode: true })

        yield* Effect.gen(function*() {
          const rt = yield* Runtime
          yield* rt.write({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT })
          const session = (yield* Effect.promise(() => call(server.base, "GET", `/sessions/${sid}`, { key: KEY }))).body
          const runtimeId = session["runtime_id"] as string
          const sessionKey = session["session_api_key"] as string

          // OpenHands' client: the token from the action server (session key), the path-mode URL.
          const tokenAnswer = yield* Effect.promise(() =>
            fetch(`${server.base}/${runtimeId}/vscode/connection_token`, {
              headers: { "X-Session-API-Key": sessionKey }
            })
          )
          const { token } = (yield* Effect.promise(() => tokenAnswer.json())) as { token: string }
          const url = rt.info.urls["vscode"]
          assert.strictEqual(url, `${server.base}/${runtimeId}/vscode?tkn=${token}&folder=%2Fworkspace`)

          // The token is exchanged for a cookie scoped to this runtime's path; the redirect stays under it.
          const redirect = yield* Effect.promise(() => fetch(url!, { redirect: "manual" }))
          assert.strictEqual(redirect.status, 302)
          assert.strictEqual(redirect.headers.get("location"), `/${runtimeId}/vscode/?folder=%2Fworkspace`)
          assert.include(redirect.headers.get("set-cookie") ?? "", `vscode-tkn=${token}; Path=/${runtimeId}/vscode;`)

          yield* expectWorkbench(url, { screenshot: "remote-vscode-workbench" })

          // A WebSocket through the proxy reaches code-server with the cookie; without it the sandbox refuses it.
          const wsPath =
            `/${runtimeId}/vscode/?reconnectionToken=${crypto.randomUUID()}&reconnection=false&skipWebSocketFrames=false`
          const withCookie = yield* upgrade(server.base, wsPath, { Cookie: `vscode-tkn=${token}` })
          assert.deepStrictEqual({ status: withCookie.status, accepted: withCookie.accepted }, {
            status: 101,
            accepted: true
          })
          const withoutCookie = yield* upgrade(server.base, wsPath, {
            "X-Session-API-Key": sessionKey,
            "X-API-Key": KEY
          })
          assert.strictEqual(withoutCookie.status, 403)
          const withoutToken = yield* Effect.promise(() =>
            fetch(`${server.base}/${runtimeId}/vscode/?folder=/workspace`, {
              headers: { "X-Session-API-Key": sessionKey }
            })
          )
          assert.strictEqual(withoutToken.status, 403)

          // Another sandbox, without the plugin: its path reaches nothing, with this one's token or cookie.
          const started = (yield* Effect.promise(() =>
            call(server.base, "POST", "/start", {
              key: KEY,
              body: { session_id: other, image, command: ["sleep", "300"] }
            })
          )).body as unknown as Started
          const [otherContainer] = sessionContainers(other)
          assert.notInclude(dockerCli("port", otherContainer!).stdout, "8001/tcp")
          const elsewhere = yield* Effect.promise(() =>
            fetch(`${server.base}/${started.runtime_id}/vscode?tkn=${token}&folder=/workspace`, { redirect: "manual" })
          )
          assert.deepStrictEqual([
            elsewhere.status,
            yield* Effect.promise(() => elsewhere.json())
          ], [404, {
            detail: `Runtime ${started.runtime_id} has no VS Code (it was not started with the vscode plugin)`
          }])
          const upgradeElsewhere = yield* upgrade(
            server.base,
            wsPath.replace(runtimeId, started.runtime_id),
            { Cookie: `vscode-tkn=${token}` }
          )
          assert.strictEqual(upgradeElsewhere.status, 404)
          const unknown = yield* upgrade(server.base, wsPath.replace(runtimeId, RUNTIME_ID), {
            Cookie: `vscode-tkn=${token}`
          })
          assert.strictEqual(unknown.status, 404)
          yield* Effect.promise(() =>
            call(server.base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
          )
        }).pipe(Effect.provide(layer), Effect.scoped)

        // Released: the runtime is stopped, and neither sandbox is left.
        for (let attempt = 0; attempt < 40 && sessionContainers(sid).length > 0; attempt++) {
          yield* Effect.sleep("250 millis")
        }
        assert.deepStrictEqual([...sessionContainers(sid), ...sessionContainers(other)], [])
      }),
    600_000
  )
})
