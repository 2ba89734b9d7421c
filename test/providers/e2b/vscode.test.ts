/**
 * E2BRuntime's `vscode` plugin through the real `e2b` SDK against the stand-in, in a template made
 * from the tools image (code-server): `info.urls.vscode` is E2B's public URL of port 8001
 * (`getHost`, as for app ports), and a real Chromium opening it through the stand-in's port proxy
 * (WebSockets included, as E2B's) gets a workbench that shows a file written into /workspace
 * through the runtime. A screenshot goes to `.tmp/test-output/e2b-vscode-workbench.png`. Nothing
 * is left behind.
 */
import { afterAll, assert, beforeAll, it } from "@effect/vitest"
import { Effect } from "effect"
import { E2BRuntime } from "../../../src/e2b.ts"
import { chromiumAvailable } from "../../conformance/chromium.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../../vscode/workbench.ts"
import { toolsRuntimeImage } from "../runtimeImages.ts"
import { API_KEY, standinOptions } from "./fixture.ts"
import { type Standin, startStandin } from "./server.ts"

/** The stand-in's template with code-server: the tools runtime image, for its user (uid 1000). */
const TOOLS_TEMPLATE = "effect-sandbox-tools"
const TOOLS_USER = "openhands"

describeDocker("E2BRuntime vscode plugin (stand-in)", () => {
  let standin: Standin
  beforeAll(async () => {
    const image = await toolsRuntimeImage()
    standin = await startStandin({
      apiKey: API_KEY,
      templates: { [TOOLS_TEMPLATE]: { image, user: TOOLS_USER, memoryMB: 2048 } }
    })
  }, 300_000)
  afterAll(async () => {
    const left = await standin.containers()
    await standin.close()
    assert.deepStrictEqual(left, [])
  })

  it.live.skipIf(!chromiumAvailable())(
    "the workbench at info.urls.vscode (E2B's URL of port 8001) loads the workspace and shows a file",
    () =>
      Effect.gen(function*() {
        const { rt, release } = yield* buildRuntime(
          E2BRuntime.layer(
            standinOptions(standin, { template: TOOLS_TEMPLATE, user: TOOLS_USER, vscode: true })
          )
        )
        const sandbox = [...standin.sandboxes.values()].at(-1)!
        const url = rt.info.urls["vscode"]
        assert.strictEqual(url?.split("/?")[0], standin.hostUrl(`8001-${sandbox.sandboxID}.e2b.app`))
        const written = yield* rt.write({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT })
        assert.strictEqual(written._tag, "FileWriteObservation")
        yield* expectWorkbench(url, { screenshot: "e2b-vscode-workbench", sharedHost: true })
        yield* release
        assert.deepStrictEqual(yield* Effect.promise(() => standin.containers()), [])
      }),
    300_000
  )
})
