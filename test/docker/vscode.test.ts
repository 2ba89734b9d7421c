/**
 * The `vscode` plugin on the tools image (code-server in /opt/code-server): DockerRuntime publishes
 * its port on 127.0.0.1 and reports OpenHands' `vscode_url` in `info.urls.vscode`; a real Chromium
 * on this machine opens that URL, the workbench loads the workspace and shows a file, and a
 * screenshot is saved to `.tmp/test-output/vscode-workbench.png`. One container, one test (a
 * workbench takes a while to load). The port refuses whoever lacks the token.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium } from "playwright-core"
import { findChromium } from "../../src/executor/browser/chromium.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import {
  assertNoContainer,
  buildRuntime,
  containerName,
  dockerLayer,
  inspect,
  removeLeftovers,
  sessionId
} from "./helpers.ts"
import { describeDocker, toolsImage } from "./infra.ts"

const OUTPUT = join(import.meta.dirname, "..", "..", ".tmp", "test-output")
const FILE = "hello_from_the_sandbox.py"

describeDocker("DockerRuntime vscode plugin", () => {
  afterAll(() => removeLeftovers("vscode"))

  it.live.skipIf(!chromiumAvailable())(
    "the workbench at info.urls.vscode loads the workspace and shows a file, in a real Chromium",
    () =>
      Effect.gen(function*() {
        const session = sessionId("vscode")
        const workspace = mkdtempSync(join(tmpdir(), "docker-vscode-"))
        writeFileSync(join(workspace, FILE), "print('the workbench opened me')\n")
        chownSync(workspace, 1000, 1000)
        chownSync(join(workspace, FILE), 1000, 1000)
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(workspace, { recursive: true, force: true })))
        const { release, rt } = yield* buildRuntime(
          dockerLayer(toolsImage(), { sessionId: session, workspace, vscode: true })
        )
        const url = rt.info.urls["vscode"]
        assert.isString(url, JSON.stringify(rt.info.urls))
        const ports = (yield* inspect(containerName(session)))!.HostConfig.PortBindings as Record<string, unknown>
        assert.deepStrictEqual((ports["8001/tcp"] as Array<{ HostIp: string }>).map((b) => b.HostIp), ["127.0.0.1"])
        const parsed = new URL(url!)
        assert.strictEqual(parsed.hostname, "127.0.0.1")
        assert.strictEqual(parsed.searchParams.get("folder"), "/workspace")
        assert.match(parsed.searchParams.get("tkn") ?? "", /^[0-9a-f-]{36}$/)
        // Without the token: refused.
        const refused = yield* Effect.promise(() => fetch(`${parsed.origin}/?folder=/workspace`))
        assert.strictEqual(refused.status, 403)

        const shown = yield* Effect.acquireUseRelease(
          Effect.promise(() => chromium.launch({ executablePath: findChromium()!, args: ["--no-sandbox"] })),
          (browser) =>
            Effect.promise(async () => {
              const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
              await page.goto(url!)
              // The explorer lists the workspace; opening the file shows its text in an editor.
              const entry = page.locator(".explorer-folders-view").getByText(FILE)
              await entry.waitFor({ timeout: 120_000 })
              await entry.click()
              await page.locator(".monaco-editor .view-lines").getByText("the workbench opened me").waitFor({
                timeout: 60_000
              })
              mkdirSync(OUTPUT, { recursive: true })
              await page.screenshot({ path: join(OUTPUT, "vscode-workbench.png") })
              return { text: await page.locator("body").innerText(), title: await page.title() }
            }),
          (browser) => Effect.promise(() => browser.close())
        )
        assert.include(shown.text, FILE)
        assert.include(shown.title, FILE)
        yield* release
        assertNoContainer(session)
      }).pipe(Effect.scoped),
    300_000
  )
})
