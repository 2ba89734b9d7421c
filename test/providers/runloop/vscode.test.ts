/**
 * RunloopRuntime with `vscode` through the real `@runloop/api-client` against the stand-in: a
 * devbox of the blueprint made from the tools image gets `VSCODE_PORT`; its port 8001 stays behind
 * the authenticated tunnel (401 without the token), and `info.urls.vscode` is the runtime's relay
 * on 127.0.0.1, which adds the token a browser cannot send. A real Chromium opening it gets a
 * workbench (its WebSockets carried by the relay and the tunnel) that lists the workspace and shows
 * a file written through the runtime (screenshot: `.tmp/test-output/runloop-vscode-workbench.png`).
 * Release shuts the devbox down and closes the relay.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { chromiumAvailable } from "../../conformance/chromium.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { ideRequest } from "../../vscode/ideHttp.ts"
import { expectOwnIdeHost, expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../../vscode/workbench.ts"
import { runloopLayer, TOOLS_BLUEPRINT, TOOLS_USER, useStandIn } from "./fixture.ts"

describeDocker("RunloopRuntime vscode (stand-in)", () => {
  const standIn = useStandIn({ tools: true })

  it.live.skipIf(!chromiumAvailable())(
    "info.urls.vscode is a loopback relay through the authenticated tunnel; the workbench shows the workspace's file in Chromium",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(
          runloopLayer(s, { blueprint: TOOLS_BLUEPRINT, ...TOOLS_USER, vscode: true })
        )
        const create = s.requests.find((r) => r.method === "POST" && r.path === "/v1/devboxes")!
        assert.strictEqual((create.body as any).environment_variables["VSCODE_PORT"], "8001")
        const devbox = [...s.devboxes.byId.values()].at(-1)!
        const tunnel = devbox.tunnel!
        // The IDE's port is as private as the server's: the tunnel wants its token there too.
        const bare = yield* Effect.promise(() => fetch(`${s.tunnelUrl(8001, tunnel.tunnel_key)}/`))
        assert.strictEqual(bare.status, 401)
        const url = rt.info.urls["vscode"]
        // The relay listens on 127.0.0.1; the URL names the IDE's own host on its port.
        const relay = `http://127.0.0.1:${expectOwnIdeHost(url).port}`
        assert.notInclude(url!, tunnel.auth_token!)
        // The relay serves pages of its own origin only.
        const foreign = yield* Effect.promise(() =>
          ideRequest(url!, { headers: { origin: "https://elsewhere.example" } })
        )
        assert.deepStrictEqual([foreign.status, foreign.body], [403, "Forbidden."])

        const written = yield* rt.write({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT })
        assert.strictEqual(written._tag, "FileWriteObservation")
        yield* expectWorkbench(url, { screenshot: "runloop-vscode-workbench" })

        yield* release
        assert.strictEqual(devbox.status, "shutdown")
        const closed = yield* Effect.promise(() => fetch(relay).then(() => "answered", (e: Error) => String(e.cause)))
        assert.include(closed, "ECONNREFUSED")
      }),
    300_000
  )
})
