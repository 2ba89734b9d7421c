/**
 * The `vscode` plugin on the tools image (code-server in /opt/code-server): DockerRuntime publishes
 * its port on 127.0.0.1 and reports OpenHands' `vscode_url` in `info.urls.vscode`; a real Chromium
 * on this machine opens that URL, the workbench loads the workspace and shows a file, and a
 * screenshot is saved to `.tmp/test-output/vscode-workbench.png`. One container, one test (a
 * workbench takes a while to load). The port refuses whoever lacks the token.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DEFAULT_SANDBOX_UID } from "../../src/runtimeImage/sandboxUser.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { expectOwnIdeHost, expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../vscode/workbench.ts"
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

describeDocker("DockerRuntime vscode plugin", () => {
  afterAll(() => removeLeftovers("vscode"))

  it.live.skipIf(!chromiumAvailable())(
    "the workbench at info.urls.vscode loads the workspace and shows a file, in a real Chromium",
    () =>
      Effect.gen(function*() {
        const session = sessionId("vscode")
        const workspace = mkdtempSync(join(tmpdir(), "docker-vscode-"))
        writeFileSync(join(workspace, WORKBENCH_FILE), WORKBENCH_TEXT)
        chownSync(workspace, DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
        chownSync(join(workspace, WORKBENCH_FILE), DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_UID)
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(workspace, { recursive: true, force: true })))
        const { release, rt } = yield* buildRuntime(
          dockerLayer(toolsImage(), { sessionId: session, workspace, vscode: true })
        )
        const url = rt.info.urls["vscode"]
        const ports = (yield* inspect(containerName(session)))!.HostConfig.PortBindings as Record<string, unknown>
        assert.deepStrictEqual((ports["8001/tcp"] as Array<{ HostIp: string }>).map((b) => b.HostIp), ["127.0.0.1"])
        expectOwnIdeHost(url)
        yield* expectWorkbench(url, { screenshot: "vscode-workbench" })
        yield* release
        assertNoContainer(session)
      }).pipe(Effect.scoped),
    300_000
  )
})
