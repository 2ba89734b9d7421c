/**
 * VS Code on RemoteRuntime through our runtime API in proxy mode (Docker provisioner, the tools
 * image's runtime image that DockerRuntime's VS Code test builds too): `--plugins vscode` in the
 * command RemoteRuntime sends, `VSCODE_PORT` set by the API, and `info.urls.vscode` in OpenHands'
 * path mode, `<api>/<runtime_id>/vscode?tkn=..&folder=..`, an entry to the IDE's own host
 * `<runtime_id>-<mac>.localhost`. A real Chromium loads the workbench there through the API's proxy
 * (its WebSockets included; screenshot `.tmp/test-output/remote-vscode-workbench.png`) and keeps
 * its cookie to that host; a WebSocket handshake through the proxy reaches code-server; without
 * the token, or from another origin, it is refused; another sandbox's path and host (started
 * without the plugin) and an unknown runtime id reach nothing. Release stops the runtime: no container of the file is left. The first describe block
 * checks the pieces that need no engine. The proxy checks themselves are vscodeProxy.ts's (shared with
 * kubernetesApi.test.ts).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { serverLaunch } from "../../src/hosted/serverLaunch.ts"
import { Runtime } from "../../src/index.ts"
import { ACTION_SERVER_PORT, remoteVsCodeBase, startRequest } from "../../src/remote.ts"
import { sandboxPod } from "../../src/runtimeApi/kubernetesPods.ts"
import { hostMatches, ideDomain, ideHostLabel, ideHostOf } from "../../src/runtimeApi/vscodeHosts.ts"
import { servesVsCode, withVsCodePort } from "../../src/runtimeApi/vscodePlugin.ts"
import { vscodeTarget } from "../../src/runtimeApi/vscodeProxy.ts"
import { sandboxConfigFromEnv } from "../../src/schema/SandboxConfig.ts"
import { tokenCookieName } from "../../src/server/vscode/ideOrigin.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { dockerCli } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
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
import { expectProxiedVsCode, idePath, toolsRuntimeImage, upgrade } from "./vscodeProxy.ts"

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

  it("names each sandbox's IDE host with a mac of its session key, and reads it back off Host", () => {
    const key = Redacted.make("session-key")
    const label = ideHostLabel(RUNTIME_ID, key)
    assert.match(label, new RegExp(`^${RUNTIME_ID}-[0-9a-f]{32}$`))
    assert.notStrictEqual(ideHostLabel(RUNTIME_ID, Redacted.make("other-key")), label)
    const host = ideHostOf(`${label}.localhost:8000`, "localhost")!
    assert.deepStrictEqual(host, { runtimeId: RUNTIME_ID, mac: label.slice(-32) })
    assert.isTrue(hostMatches(host, key))
    assert.isFalse(hostMatches(host, Redacted.make("other-key")))
    assert.deepStrictEqual(ideHostOf(`${label.toUpperCase()}.IDE.Example.com`, "ide.example.com"), host)
    for (
      const other of ["127.0.0.1:8000", `${label}.localhost.evil:80`, `x${label}.localhost`, `${label}x.localhost`]
    ) {
      assert.isUndefined(ideHostOf(other, "localhost"), other)
    }
    assert.strictEqual(ideDomain(undefined, "127.0.0.1"), "localhost")
    assert.strictEqual(ideDomain(undefined, "localhost"), "localhost")
    assert.isUndefined(ideDomain(undefined, "sandboxes.example.com"))
    assert.strictEqual(ideDomain("ide.example.com", "127.0.0.1"), "ide.example.com")
  })

  it("RemoteRuntime sends the plugin, not the port, and puts the URL where OpenHands' client does", () =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxConfigFromEnv
      const user = { name: "openhands", id: 74289 }
      const body = startRequest("img", {
        sessionId: "sid",
        sessionKey: Redacted.make("k"),
        server: serverLaunch({ vscode: true }, sandbox, "sid", user, ACTION_SERVER_PORT)
      }, {})
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
          user: { name: "openhands", id: 74289 },
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

          const { token } = yield* expectProxiedVsCode({
            base: server.base,
            runtimeId,
            sessionKey,
            apiKey: KEY,
            url: rt.info.urls["vscode"]
          })
          yield* expectWorkbench(rt.info.urls["vscode"], { screenshot: "remote-vscode-workbench" })

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
          const cookie = `${tokenCookieName(token)}=${token}`
          const upgradeElsewhere = yield* upgrade(server.base, idePath(`/${started.runtime_id}/vscode`), {
            Cookie: cookie
          })
          assert.strictEqual(upgradeElsewhere.status, 404)
          const unknown = yield* upgrade(server.base, idePath(`/${RUNTIME_ID}/vscode`), { Cookie: cookie })
          assert.strictEqual(unknown.status, 404)
          // The other sandbox's own IDE host (its mac right) reaches nothing either.
          const otherHost = `http://${
            ideHostLabel(started.runtime_id, Redacted.make(started.session_api_key))
          }.localhost:${new URL(server.base).port}`
          const atOtherHost = yield* upgrade(otherHost, idePath(), { Cookie: cookie, Origin: otherHost })
          assert.deepStrictEqual([atOtherHost.status, JSON.parse(atOtherHost.body)], [404, {
            detail: `Runtime ${started.runtime_id} has no VS Code (it was not started with the vscode plugin)`
          }])
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

  it.live(
    "a public URL off loopback and no --vscode-domain: the plugin is left off and the server says why",
    () =>
      Effect.gen(function*() {
        const image = yield* toolsRuntimeImage
        const server = yield* Effect.promise(() =>
          startApiServer(["--proxy", "--public-url", "http://sandboxes.example:8000"], KEY)
        )
        servers.push(server)
        assert.include(server.stderr(), "VS Code is off: each sandbox's IDE needs a host of its own")
        const sid = newSessionId()
        const started = (yield* Effect.promise(() =>
          call(server.base, "POST", "/start", {
            key: KEY,
            body: { session_id: sid, image, command: ["sh", "-c", "sleep 300", "x", "--plugins", "vscode"] }
          })
        )).body as unknown as Started
        const [container] = sessionContainers(sid)
        const env = JSON.parse(dockerCli("inspect", "--format", "{{json .Config.Env}}", container!).stdout) as Array<
          string
        >
        assert.isFalse(env.some((entry) => entry.startsWith("VSCODE_PORT=")), "no VSCODE_PORT")
        assert.notInclude(dockerCli("port", container!).stdout, "8001/tcp")
        const entry = yield* Effect.promise(() =>
          fetch(`${server.base}/${started.runtime_id}/vscode?tkn=x`, { redirect: "manual" })
        )
        assert.deepStrictEqual([entry.status, yield* Effect.promise(() => entry.json())], [404, {
          detail: `Runtime ${started.runtime_id} has no VS Code (it was not started with the vscode plugin)`
        }])
        yield* Effect.promise(() =>
          call(server.base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
        )
        assert.deepStrictEqual(sessionContainers(sid), [])
      }),
    300_000
  )
})
