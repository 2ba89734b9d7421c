/**
 * KubernetesRuntime's `vscode` plugin on the stand-in, tools image (code-server in /opt/code-server):
 * the pod gets `VSCODE_PORT` and a port 8001 named `vscode` only with the option; the owner reaches
 * the IDE on a second loopback listener through the API server's port-forward, where a real
 * Chromium loads the workbench (screenshot `.tmp/test-output/kubernetes-vscode-workbench.png`);
 * after pause and resume that listener reaches the new pod, whose IDE has a new token (which
 * `attach` reports); a claim on a SandboxTemplate written with `vscode: true` gets the IDE (reached
 * at the pod IP: `connect: "direct"`), one on a template without it is refused; nothing is left
 * after release, the listeners included.
 */
import { assert, describe, it } from "@effect/vitest"
import { CoreV1Api, type V1Container } from "@kubernetes/client-node"
import { Effect } from "effect"
import { connect } from "node:net"
import { runsVsCode } from "../../src/engines/kubernetes/podSpec.ts"
import { FileWriteAction, RuntimeStartError, SandboxConfig } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { chromiumAvailable } from "../conformance/chromium.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { expectOwnIdeHost, expectWorkbench, tokenGate, WORKBENCH_FILE, WORKBENCH_TEXT } from "../vscode/workbench.ts"
import {
  assertEngineClean,
  assertNothingLeft,
  namespace,
  noObjects,
  sessionIdOf,
  sessionObjects,
  standInLayer,
  useStandIn
} from "./helpers.ts"
import { eventually, extensionObject } from "./lifecycle.ts"

/** The runtime container of a `sandboxTemplate` for `options` (no image build: `image` is named). */
const templateContainer = (options: { readonly vscode?: boolean }) =>
  Effect.map(
    KubernetesRuntime.sandboxTemplate("tpl", { image: "registry.example.com/runtime:1", ...options }),
    (template) => (template.spec["podTemplate"] as { spec: { containers: Array<V1Container> } }).spec.containers[0]!
  )

const envNames = (container: V1Container) => (container.env ?? []).map((variable) => variable.name)

describe("KubernetesRuntime vscode pod spec", () => {
  it.effect("has port 8001 `vscode`, VSCODE_PORT and the plugin only with vscode: true", () =>
    Effect.gen(function*() {
      const without = yield* templateContainer({})
      assert.deepStrictEqual(without.ports, [{ name: "http", containerPort: 8080 }])
      assert.notInclude(envNames(without), "VSCODE_PORT")
      assert.notInclude(without.command!, "vscode")
      assert.isFalse(runsVsCode(without))

      const withIde = yield* templateContainer({ vscode: true })
      assert.deepStrictEqual(withIde.ports, [
        { name: "http", containerPort: 8080 },
        { name: "vscode", containerPort: 8001 }
      ])
      assert.deepStrictEqual(withIde.env?.filter((variable) => variable.name === "VSCODE_PORT"), [
        { name: "VSCODE_PORT", value: "8001" }
      ])
      assert.isTrue(runsVsCode(withIde))
      // A later entry of the name wins (the kubelet's rule): one that moves the port is not ours.
      assert.isFalse(runsVsCode({ ...withIde, env: [...withIde.env!, { name: "VSCODE_PORT", value: "8081" }] }))
    }))
})

/** Whether a TCP connection to `url`'s port is refused (the listener is closed). */
const refused = (url: string) =>
  Effect.promise(() =>
    new Promise<boolean>((resolve) => {
      const socket = connect(Number(new URL(url).port), "127.0.0.1")
      socket.on("connect", () => {
        socket.destroy()
        resolve(false)
      })
      socket.on("error", () => resolve(true))
    })
  )

describeDocker("KubernetesRuntime vscode plugin (stand-in)", () => {
  const cluster = useStandIn()

  it.live.skipIf(!chromiumAvailable())(
    "the workbench loads through the port-forward; the listener survives pause and resume; release leaves nothing",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("vs")
        const { rt, release } = yield* buildRuntime(
          standInLayer(cluster, { sessionId, vscode: true, connect: "portForward", deleteWorkspace: true })
        )
        const pod = yield* Effect.promise(() =>
          cluster.kubeConfig.makeApiClient(CoreV1Api).readNamespacedPod({
            name: `effect-sandbox-${sessionId}`,
            namespace
          })
        )
        assert.isTrue(runsVsCode(pod.spec!.containers[0]))
        assert.deepStrictEqual(pod.spec!.containers[0]!.ports?.map((port) => port.name), ["http", "vscode"])
        yield* rt.run(new FileWriteAction({ path: `/workspace/${WORKBENCH_FILE}`, content: WORKBENCH_TEXT }))

        const url = rt.info.urls["vscode"]
        assert.isString(url, "info.urls.vscode")
        const base = new URL(url!).origin
        const started = new URL(url!).searchParams.get("tkn")!
        expectOwnIdeHost(url)
        assert.notStrictEqual(base, new URL(rt.info.urls["actionServer"]!).origin)
        yield* expectWorkbench(url, { screenshot: "kubernetes-vscode-workbench" })

        // Resume makes a new pod, whose IDE has a new token: info.urls.vscode is rewritten with it
        // (same listener, which reaches the new pod), and the old token is refused there.
        yield* rt.pause
        yield* rt.resume
        const resumed = new URL(rt.info.urls["vscode"] ?? "http://missing")
        const token = resumed.searchParams.get("tkn")!
        assert.notStrictEqual(token, started)
        // Same listener (port), the new token's own host.
        assert.strictEqual(resumed.port, new URL(base).port)
        expectOwnIdeHost(resumed.href)
        assert.strictEqual(resumed.searchParams.get("folder"), "/workspace")
        assert.strictEqual(yield* tokenGate(base, token), 302)
        assert.strictEqual(yield* tokenGate(base, started), 403)
        // `attach` reads the same IDE's token (and, kept alive, leaves the pod running), on a listener of its own.
        const attached = yield* buildRuntime(
          KubernetesRuntime.attach(sessionId, {
            kubeConfig: cluster.kubeConfig,
            vscode: true,
            sandbox: new SandboxConfig({ keepRuntimeAlive: true })
          })
        )
        const fresh = new URL(attached.rt.info.urls["vscode"] ?? "http://missing")
        assert.strictEqual(fresh.searchParams.get("tkn"), token)
        assert.notStrictEqual(fresh.origin, base)
        assert.strictEqual(yield* tokenGate(fresh.origin, token), 302)
        yield* attached.release
        assert.isTrue(yield* refused(fresh.origin), "the attached runtime's VS Code listener is still open")

        yield* release
        assert.isTrue(yield* refused(base), "the VS Code listener is still open")
        yield* assertNothingLeft(cluster, sessionId)
      }),
    300_000
  )

  it.live(
    "a claim on a template written with vscode gets the IDE at the pod IP; one on a template without it is refused",
    () =>
      Effect.gen(function*() {
        const kc = cluster.kubeConfig
        for (const [name, vscode] of [["tpl-vscode", true], ["tpl-plain", false]] as const) {
          yield* extensionObject(
            kc,
            "sandboxtemplates",
            yield* KubernetesRuntime.sandboxTemplate(name, { baseImage: cluster.image, vscode })
          )
        }
        const claimed = (sessionId: string, template: string) =>
          standInLayer(cluster, {
            sessionId,
            warmPoolTemplate: template,
            vscode: true,
            connect: "direct",
            deleteWorkspace: true
          })

        const sessionId = sessionIdOf("vc")
        const { rt, release } = yield* buildRuntime(claimed(sessionId, "tpl-vscode"))
        const url = new URL(rt.info.urls["vscode"] ?? "http://missing")
        // The stand-in's pod IP is loopback, a host every local page shares: the IDE is on its own.
        expectOwnIdeHost(url.href)
        assert.strictEqual(url.searchParams.get("folder"), "/workspace")
        assert.strictEqual(yield* tokenGate(url.origin, url.searchParams.get("tkn")!), 302)
        assert.strictEqual(yield* tokenGate(url.origin, "not-the-token"), 403)
        yield* release
        assert.deepStrictEqual(yield* sessionObjects(kc, sessionId), noObjects)

        const plainId = sessionIdOf("vp")
        const error = yield* Effect.flip(buildRuntime(claimed(plainId, "tpl-plain")))
        assert.instanceOf(error, RuntimeStartError)
        assert.match(
          error.message,
          new RegExp(
            `^SandboxClaim default/effect-sandbox-${plainId} was given Sandbox effect-sandbox-${plainId}, whose pod ` +
              `does not run VS Code \\(the server's --plugins vscode and VSCODE_PORT=8001\\), which the options ` +
              `ask for: the SandboxTemplate tpl-plain decides, so write it with ` +
              `KubernetesRuntime\\.sandboxTemplate\\(name, \\{ vscode: true \\}\\)$`
          )
        )
        assert.deepStrictEqual(yield* sessionObjects(kc, plainId), noObjects)
      }).pipe(
        Effect.scoped,
        Effect.andThen(Effect.gen(function*() {
          const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
          const gone = yield* eventually(async () =>
            (await core.listNamespacedPod({ namespace })).items.length === 0 &&
            (await core.listNamespacedPersistentVolumeClaim({ namespace })).items.length === 0
          )
          assert.isTrue(gone, "pods or PVCs left behind")
          yield* assertEngineClean(cluster.standIn)
        }))
      ),
    240_000
  )
})
