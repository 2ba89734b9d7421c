/**
 * The `network` option seen from the sandbox's tools (docs/network.md), where egress.test.ts covers
 * the shell: an IPython cell and the browser of one tools-image sandbox allowed to reach one address
 * of this host (the sandboxes' bridge gateway) and not another (the default bridge's), both served
 * by one HTTP server this test starts. Python's urllib and Chromium both go through the gateway's
 * proxy, named by the sandbox's proxy variables; without those variables nothing leaves.
 */
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import {
  BrowserOutputObservation,
  IPythonRunCellAction,
  IPythonRunCellObservation,
  type Observation,
  type RuntimeShape
} from "../../src/index.ts"
import { assertNoEgress, bridgeAddress, gatewayOf, removeEgressLeftovers, startDestination } from "./egressHosts.ts"
import { assertNoContainer, buildRuntime, dockerLayer, sessionId } from "./helpers.ts"
import { describeDocker, toolsImage } from "./infra.ts"

/** A cell's output (asserted to be one). */
const cell = (rt: RuntimeShape, code: string) =>
  rt.runIPython(new IPythonRunCellAction({ code, includeExtra: false })).pipe(Effect.map((obs) => {
    assert.instanceOf(obs, IPythonRunCellObservation, obs.content)
    return obs.content
  }))

/**
 * A GET with urllib in the kernel: `<status> <body>`, or the error's type and code/reason. `opener`
 * is `urlopen` (whose shared opener reads the proxy variables once, at its first use) or a fresh
 * `build_opener().open` (which reads them now).
 */
const urlopen = (url: string, opener = "urllib.request.urlopen") =>
  `import urllib.request, urllib.error\n` +
  `try:\n` +
  `    with ${opener}(${JSON.stringify(url)}, timeout=8) as r: print(r.status, r.read().decode())\n` +
  `except urllib.error.HTTPError as e: print("HTTPError", e.code, e.read().decode().strip())\n` +
  `except urllib.error.URLError as e: print("URLError", e.reason)`

const asBrowserOutput = (obs: Observation): BrowserOutputObservation => {
  assert.instanceOf(obs, BrowserOutputObservation, obs.content)
  return obs as BrowserOutputObservation
}

describeDocker("DockerRuntime network option: IPython and the browser", () => {
  const session = sessionId("egresstool")
  const scope = Effect.runSync(Scope.make())
  let sandbox: { readonly rt: RuntimeShape; readonly allowed: string; readonly denied: string }

  beforeAll(async () => {
    sandbox = await Effect.runPromise(
      Effect.gen(function*() {
        const port = yield* startDestination()
        const allowed = yield* bridgeAddress
        const { rt } = yield* buildRuntime(dockerLayer(toolsImage(), {
          sessionId: session,
          ipython: { agentSkills: false },
          browser: true,
          network: { allowOnly: [`${allowed}/32`] }
        }))
        return { rt, allowed: `${allowed}:${port}`, denied: `${gatewayOf("bridge")}:${port}` }
      }).pipe(Scope.provide(scope))
    )
  }, 300_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    assertNoContainer(session)
    assertNoEgress(session)
    removeEgressLeftovers("egresstool")
  })

  it.live(
    "IPython: urllib reaches the allowed host through the proxy; the denied one is refused by it",
    () =>
      Effect.gen(function*() {
        const { allowed, denied, rt } = sandbox
        const host = allowed.split(":")[0]
        assert.strictEqual(yield* cell(rt, urlopen(`http://${allowed}/`)), `200 reached ${host}`)
        assert.strictEqual(
          yield* cell(rt, urlopen(`http://${denied}/`)),
          `HTTPError 403 effect-sandbox egress policy: ${denied} is not allowed (address not allowed)`
        )
      }),
    60_000
  )

  it.live(
    "IPython: with the proxy variables removed, neither urllib nor a raw socket reaches the allowed host",
    () =>
      Effect.gen(function*() {
        const { allowed, rt } = sandbox
        const [host, port] = allowed.split(":")
        // The raw connection in a thread beside urllib's: each waits for the network to say no.
        const out = yield* cell(
          rt,
          `import os, socket\n` +
            `from concurrent.futures import ThreadPoolExecutor\n` +
            `saved = {k: os.environ.pop(k) for k in list(os.environ) if k.lower().endswith("_proxy")}\n` +
            `print(sorted(saved))\n` +
            `def raw():\n` +
            `    try:\n` +
            `        socket.create_connection((${JSON.stringify(host)}, ${port}), timeout=8); return "connected"\n` +
            `    except OSError as e: return f"socket {e.strerror or e}"\n` +
            `try:\n` +
            `    with ThreadPoolExecutor() as pool:\n` +
            `        connecting = pool.submit(raw)\n` +
            urlopen(`http://${allowed}/`, "urllib.request.build_opener().open").split("\n").map((line) =>
              `        ${line}`
            )
              .join("\n") +
            "\n" +
            `        print(connecting.result())\n` +
            `finally:\n` +
            `    os.environ.update(saved)`
        )
        const [names, viaUrllib, viaSocket] = out.split("\n")
        assert.strictEqual(
          names,
          "['ALL_PROXY', 'HTTPS_PROXY', 'HTTP_PROXY', 'NODE_USE_ENV_PROXY', 'NO_PROXY', " +
            "'all_proxy', 'http_proxy', 'https_proxy', 'no_proxy']"
        )
        // No route out of the sandbox's network: unreachable, refused or unanswered, as the engine's network has it.
        const nothing = "(Network is unreachable|No route to host|Connection refused|timed out)"
        assert.match(viaUrllib ?? "", new RegExp(`^URLError (\\[Errno \\d+\\] )?${nothing}$`))
        assert.match(viaSocket ?? "", new RegExp(`^socket ${nothing}$`))
      }),
    60_000
  )

  it.live(
    "the browser shows the allowed host's text and an error observation for the denied one",
    () =>
      Effect.gen(function*() {
        const { allowed, denied, rt } = sandbox
        const page = asBrowserOutput(yield* rt.browseInteractive(`goto("http://${allowed}/")`))
        assert.strictEqual(page.url, `http://${allowed}/`)
        assert.include(page.content, `StaticText 'reached ${allowed.split(":")[0]}'`)
        // The proxy's refusal is a page with a 403, which `browse` reports as an error.
        const refused = asBrowserOutput(yield* rt.browse(`http://${denied}/`))
        assert.strictEqual(refused.error, true, refused.content)
        assert.strictEqual(refused.lastBrowserActionError, `HTTP 403 Forbidden for http://${denied}/`)
        assert.include(refused.content, `effect-sandbox egress policy: ${denied} is not allowed (address not allowed)`)
      }),
    90_000
  )
})
