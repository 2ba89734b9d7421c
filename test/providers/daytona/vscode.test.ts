/**
 * DaytonaRuntime's `vscode` plugin through the real SDK against the stand-in, in a snapshot made
 * from the tools image (code-server). A browser cannot send the preview token's header, so
 * `info.urls.vscode` is a signed preview URL of port 8001 (Daytona's `getSignedPreviewUrl`, the
 * token in the URL, with the expiry asked); a real Chromium opening it through the stand-in's
 * preview proxy (WebSockets included, as Daytona's) gets a workbench that shows a file written into
 * /workspace through the runtime. A screenshot goes to `.tmp/test-output/daytona-vscode-workbench.png`.
 * A bad expiry is refused before anything is created; nothing is left behind.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import type { InvalidOptionsError } from "../../../src/index.ts"
import { chromiumAvailable } from "../../conformance/chromium.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../../vscode/workbench.ts"
import { toolsRuntimeImage } from "../runtimeImages.ts"
import { daytonaLayer, useStandIn } from "./infra.ts"

/** The stand-in's snapshot with code-server: the tools runtime image (uid 1000 `openhands`, DaytonaRuntime's default user). */
const TOOLS_SNAPSHOT = "effect-sandbox-tools"

describeDocker("DaytonaRuntime vscode plugin (stand-in)", () => {
  const standIn = useStandIn(async () => ({ [TOOLS_SNAPSHOT]: await toolsRuntimeImage() }))

  it.live("a vscodeLinkExpiry Daytona would refuse is an InvalidOptionsError, before anything is asked", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = s.requests.length
      for (const expiry of ["25 hours", "0 seconds"] as const) {
        const error =
          (yield* startError(daytonaLayer(s, { vscode: true, vscodeLinkExpiry: expiry }))) as InvalidOptionsError
        assert.strictEqual(error._tag, "InvalidOptionsError")
        assert.strictEqual(
          error.message,
          "DaytonaRuntime options: vscodeLinkExpiry must be between 1 second and 24 hours " +
            "(what Daytona allows for a signed preview URL)."
        )
      }
      assert.strictEqual(s.requests.length, before)
    }))

  it.live.skipIf(!chromiumAvailable())(
    "the workbench at info.urls.vscode (a signed preview URL of port 8001) loads the workspace and shows a file",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { rt, release } = yield* buildRuntime(
          daytonaLayer(s, { snapshot: TOOLS_SNAPSHOT, vscode: true, vscodeLinkExpiry: "2 hours" })
        )
        const sandbox = [...s.sandboxes.byId.values()].find((x) => x.state === "started")!
        const create = s.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").at(-1)!
        assert.strictEqual((create.body as { env: Record<string, string> }).env["VSCODE_PORT"], "8001")
        // One link, for port 8001 of this sandbox, valid for the expiry asked.
        const signed = [...s.signedPreviews.byToken.entries()].filter(([, link]) => link.sandboxId === sandbox.id)
        assert.strictEqual(signed.length, 1)
        const [token, link] = signed[0]!
        assert.strictEqual(link.port, 8001)
        assert.approximately(link.expiresAt - Date.now(), 2 * 60 * 60 * 1000, 60_000)
        const url = rt.info.urls["vscode"]
        assert.strictEqual(url?.split("/?")[0], `${s.apiUrl.replace(/\/api$/, "")}/preview/8001-${token}`)
        assert.notInclude(url, sandbox.previewToken)
        const written = yield* rt.write({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT })
        assert.strictEqual(written._tag, "FileWriteObservation")
        yield* expectWorkbench(url, { screenshot: "daytona-vscode-workbench", sharedHost: true })
        yield* release
        assert.strictEqual(sandbox.state, "destroyed")
      }),
    300_000
  )
})
