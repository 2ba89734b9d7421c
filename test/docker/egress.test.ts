/**
 * The `network` option on DockerRuntime (docs/network.md), end to end against destinations this
 * test starts itself: one HTTP server on this host, reached from containers at two of the host's
 * addresses, the sandboxes' bridge gateway (allowed) and the default bridge's (denied). One
 * sandbox per policy, every case on it; after release neither the sandbox, its gateway nor its
 * network is left.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { IMAGE_NODE } from "../../src/engines/docker/containerSpec.ts"
import { EGRESS_OF, egressName, reapStrayGateways } from "../../src/engines/docker/egress.ts"
import { connectEngine, DockerEngine } from "../../src/engines/docker/engine.ts"
import { assertNoEgress, bridgeAddress, gatewayOf, removeEgressLeftovers, startDestination } from "./egressHosts.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerCli,
  dockerLayer,
  httpGet,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

/**
 * A GET from inside the sandbox with the image's Node (fetch, which follows HTTP_PROXY under
 * NODE_USE_ENV_PROXY): `<status> <body>`, or `failed <code>` and exit code 1.
 */
const get = (url: string, env = "") =>
  `${env} ${IMAGE_NODE} -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(2500) }).then(` +
  `async (r) => console.log(r.status, await r.text()), ` +
  `(e) => { console.log("failed", e.cause?.code ?? e.name); process.exit(1) })' ${url}`

describeDocker("DockerRuntime network option", () => {
  afterAll(() => removeEgressLeftovers("egress"))

  it.live(
    "allowOnly: an allowed address is reached through the proxy; a denied one and a bypass are not",
    () =>
      Effect.gen(function*() {
        const port = yield* startDestination()
        const allowed = yield* bridgeAddress
        const denied = gatewayOf("bridge")
        const session = sessionId("egress")
        const { release, rt } = yield* buildRuntime(
          dockerLayer(baseImage(), { sessionId: session, appPorts: [9100], network: { allowOnly: [`${allowed}/32`] } })
        )
        const through = yield* sh(rt, get(`http://${allowed}:${port}/`))
        assert.strictEqual(through.content.trim(), `200 reached ${allowed}`)
        const refused = yield* sh(rt, get(`http://${denied}:${port}/`))
        // Node's fetch tunnels every request (CONNECT), which the proxy refuses with a 403, and logs.
        assert.strictEqual(refused.exitCode, 1)
        const log = dockerCli("logs", egressName(containerName(session)))
        assert.include(log.stderr, `egress denied: ${denied}:${port} (address not allowed)`)
        // Around the proxy (its variables unset): no route out of the sandbox's network.
        const bypass = yield* sh(
          rt,
          get(`http://${allowed}:${port}/`, "env -u HTTP_PROXY -u http_proxy NODE_USE_ENV_PROXY=0")
        )
        assert.strictEqual(bypass.exitCode, 1)
        assert.match(bypass.content.trim(), /^failed /)
        // The ports the host publishes still reach the sandbox (through its gateway).
        yield* sh(
          rt,
          `nohup ${IMAGE_NODE} -e 'require("http").createServer((q, r) => r.end("app")).listen(9100)' >/dev/null 2>&1 &`
        )
        const app = yield* httpGet(`${rt.info.urls["app-9100"]}/`)
        assert.deepStrictEqual(app, { status: 200, body: "app" })
        yield* release
        assertNoContainer(session)
        assertNoEgress(session)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live("deny-all: nothing is reached, not even the host, and no proxy is offered", () =>
    Effect.gen(function*() {
      const port = yield* startDestination()
      const allowed = yield* bridgeAddress
      const session = sessionId("egress")
      const { release, rt } = yield* buildRuntime(
        dockerLayer(baseImage(), { sessionId: session, network: "deny-all" })
      )
      const env = yield* sh(rt, "env | grep -ci _proxy || true")
      assert.strictEqual(env.content.trim(), "0")
      const out = yield* sh(rt, get(`http://${allowed}:${port}/`))
      assert.strictEqual(out.exitCode, 1)
      assert.match(out.content.trim(), /^failed /)
      yield* release
      assertNoContainer(session)
      assertNoEgress(session)
    }).pipe(Effect.scoped), 120_000)

  it.live("a gateway whose sandbox is gone is reaped with its network; one whose sandbox lives is not", () =>
    Effect.gen(function*() {
      const stray = containerName(sessionId("egress"))
      const kept = containerName(sessionId("egress"))
      for (const name of [stray, kept]) {
        dockerCli("network", "create", "--internal", "--label", `${EGRESS_OF}=${name}`, egressName(name))
        dockerCli("create", "--name", egressName(name), "--label", `${EGRESS_OF}=${name}`, baseImage(), "true")
      }
      // The living one's sandbox: any container by its name.
      dockerCli("create", "--name", kept, baseImage(), "true")
      const engine = yield* connectEngine
      const reaped = yield* reapStrayGateways("0 seconds").pipe(Effect.provideService(DockerEngine, engine))
      assert.isAtLeast(reaped, 1)
      assertNoEgress(stray.replace(/^effect-sandbox-/, ""))
      assert.notStrictEqual(dockerCli("ps", "-aq", "--filter", `name=^${egressName(kept)}$`).stdout.trim(), "")
      dockerCli("rm", "-f", kept, egressName(kept))
      dockerCli("network", "rm", egressName(kept))
    }))
})
