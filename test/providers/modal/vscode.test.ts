/**
 * ModalRuntime with `vscode` through the real `modal` SDK against the stand-in: the sandbox of the
 * image made from the tools image opens VS Code's port (8001) as an encrypted tunnel of its own,
 * `info.urls.vscode` is that tunnel's URL with the connection token, and a real Chromium opening
 * it (trusting the stand-in's tunnel certificate, as a browser trusts Modal's) gets a workbench
 * that lists the workspace and shows a file written through the runtime (screenshot:
 * `.tmp/test-output/modal-vscode-workbench.png`). The sandbox is gone afterwards.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { ModalRuntime } from "../../../src/modal.ts"
import { chromiumAvailable } from "../../conformance/chromium.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { expectWorkbench, WORKBENCH_FILE, WORKBENCH_TEXT } from "../../vscode/workbench.ts"
import { standinOptions, TOOLS_IMAGE, useModalStandin } from "./fixture.ts"
import { STATUS } from "./sandboxes.ts"

describeDocker("ModalRuntime vscode (stand-in)", () => {
  const standinOf = useModalStandin({ tools: true })

  it.live.skipIf(!chromiumAvailable())(
    "info.urls.vscode is the tunnel of port 8001; the workbench there shows the workspace's file in Chromium",
    () =>
      Effect.gen(function*() {
        const standin = standinOf()
        const { rt, release } = yield* buildRuntime(
          ModalRuntime.layer(standinOptions(standin, { image: TOOLS_IMAGE, vscode: true }))
        )
        const sandbox = [...standin.sandboxes.values()].at(-1)!
        assert.deepStrictEqual(sandbox.definition.openPorts?.ports.map((p) => [p.port, p.unencrypted]), [
          [8000, false],
          [8001, false]
        ])
        const tunnel = sandbox.tunnels.find((t) => t.containerPort === 8001)!
        const url = rt.info.urls["vscode"]
        assert.strictEqual(new URL(url ?? "http://missing").origin, `https://127.0.0.1:${tunnel.port}`)
        const written = yield* rt.write({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT })
        assert.strictEqual(written._tag, "FileWriteObservation")
        yield* expectWorkbench(url, {
          screenshot: "modal-vscode-workbench",
          certificate: standin.certificate,
          sharedHost: true
        })
        yield* release
        assert.strictEqual(sandbox.result?.status, STATUS.terminated)
        assert.deepStrictEqual(yield* Effect.promise(() => standin.containers()), [])
      }),
    300_000
  )
})
