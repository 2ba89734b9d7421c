/**
 * KubernetesRuntime's ingress (`ingressDomain`, `ingressTlsSecret`, `ingressClassName`) on the stand-in: the action
 * server's host `<session>.<domain>`, and with `vscode: true` VS Code's `vscode-<session>.<domain>`
 * (OpenHands' `vscode_url` there: `info.urls.vscodeIngress`, beside the owner's loopback URL), both
 * in the TLS block and external-dns's annotation. The stand-in has no ingress controller, so the
 * test follows each rule as one would (host, service port, its named target port, the pod's port
 * at the pod IP) and checks what answers there: the server, and the IDE's token gate, which lets
 * only the current token through, across a pause and resume. Release leaves nothing.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, NetworkingV1Api, type V1Ingress } from "@kubernetes/client-node"
import { Effect } from "effect"
import type { KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { tokenGate } from "../vscode/workbench.ts"
import { assertNothingLeft, namespace, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"

const DOMAIN = "sandboxes.example.test"
const TLS_SECRET = "sandboxes-wildcard-tls"

/** Each rule's host and the service port it goes to. */
const rulesOf = (ingress: V1Ingress) =>
  ingress.spec!.rules!.map((rule) => [rule.host, rule.http!.paths[0]!.backend.service!.port!.number])

/** The connection token a VS Code URL carries. */
const tokenOf = (url: string | undefined) => new URL(url ?? "http://missing").searchParams.get("tkn")!

describeDocker("KubernetesRuntime ingress (stand-in)", () => {
  const cluster = useStandIn()

  const read = (sessionId: string) =>
    Effect.promise(async () => {
      const name = `effect-sandbox-${sessionId}`
      const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
      return {
        ingress: await cluster.kubeConfig.makeApiClient(NetworkingV1Api).readNamespacedIngress({
          name: `${name}-ingress`,
          namespace
        }),
        service: await core.readNamespacedService({ name: `${name}-svc`, namespace }),
        pod: await core.readNamespacedPod({ name, namespace })
      }
    })

  /** Where an ingress controller sends `host`'s requests: through the service's port to the pod's, at the pod IP. */
  const routed = (sessionId: string, host: string) =>
    Effect.gen(function*() {
      const { ingress, pod, service } = yield* read(sessionId)
      const backend = ingress.spec!.rules!.find((rule) => rule.host === host)!.http!.paths[0]!.backend.service!
      assert.strictEqual(backend.name, service.metadata!.name)
      const target = service.spec!.ports!.find((port) => port.port === backend.port!.number)!.targetPort
      const port = pod.spec!.containers[0]!.ports!.find((p) => p.name === target)!.containerPort
      return `http://${pod.status!.podIP}:${port}`
    })

  /** A runtime with an ingress on `DOMAIN` (and `options`), reached at the pod IP, its workspace removed on release. */
  const withIngress = (options: Pick<KubernetesRuntimeOptions, "ingressTlsSecret" | "ingressClassName" | "vscode">) =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("ing")
      const built = yield* buildRuntime(standInLayer(cluster, {
        sessionId,
        ingressDomain: DOMAIN,
        connect: "direct",
        deleteWorkspace: true,
        ...options
      }))
      return { ...built, sessionId }
    })

  it.live(
    "with vscode: the server's host and VS Code's vscode- host, under TLS; each route ends where it should",
    () =>
      Effect.gen(function*() {
        const { release, rt, sessionId } = yield* withIngress({
          ingressTlsSecret: TLS_SECRET,
          ingressClassName: "nginx",
          vscode: true
        })
        const server = `${sessionId}.${DOMAIN}`
        const ide = `vscode-${sessionId}.${DOMAIN}`
        const urls = () => rt.info.urls
        const started = tokenOf(urls()["vscode"])
        assert.strictEqual(urls()["ingress"], `https://${server}`)
        assert.strictEqual(urls()["vscodeIngress"], `https://${ide}/?tkn=${started}&folder=%2Fworkspace`)

        const { ingress, service } = yield* read(sessionId)
        assert.deepStrictEqual(rulesOf(ingress), [[server, 8080], [ide, 8001]])
        assert.deepStrictEqual(ingress.spec!.tls, [{ hosts: [server, ide], secretName: TLS_SECRET }])
        assert.strictEqual(ingress.spec!.ingressClassName, "nginx")
        assert.strictEqual(
          ingress.metadata!.annotations!["external-dns.alpha.kubernetes.io/hostname"],
          `${server},${ide}`
        )
        assert.deepStrictEqual(service.spec!.ports!.map((port) => [port.name, port.port, port.targetPort]), [
          ["execution-server", 8080, "http"],
          ["vscode", 8001, "vscode"]
        ])

        const serverRoute = yield* routed(sessionId, server)
        const alive = yield* Effect.promise(async () => (await fetch(`${serverRoute}/alive`)).status)
        assert.strictEqual(alive, 200)
        assert.strictEqual(yield* tokenGate(yield* routed(sessionId, ide), started), 302)
        assert.strictEqual(yield* tokenGate(yield* routed(sessionId, ide), "not-the-token"), 403)

        // A resumed pod's IDE has a new token: both URLs carry it, and the old one is refused.
        yield* rt.pause
        yield* rt.resume
        const resumed = tokenOf(urls()["vscodeIngress"])
        assert.notStrictEqual(resumed, started)
        assert.strictEqual(tokenOf(urls()["vscode"]), resumed)
        assert.strictEqual(yield* tokenGate(yield* routed(sessionId, ide), resumed), 302)
        assert.strictEqual(yield* tokenGate(yield* routed(sessionId, ide), started), 403)

        yield* release
        yield* assertNothingLeft(cluster, sessionId)
      }),
    240_000
  )

  it.live(
    "without vscode: one host to the server, one service port, no vscodeIngress; plain http without TLS",
    () =>
      Effect.gen(function*() {
        const { release, rt, sessionId } = yield* withIngress({})
        const server = `${sessionId}.${DOMAIN}`
        assert.strictEqual(rt.info.urls["ingress"], `http://${server}`)
        assert.isUndefined(rt.info.urls["vscodeIngress"])
        const { ingress, service } = yield* read(sessionId)
        assert.deepStrictEqual(rulesOf(ingress), [[server, 8080]])
        assert.isUndefined(ingress.spec!.tls)
        assert.isUndefined(ingress.spec!.ingressClassName)
        assert.strictEqual(ingress.metadata!.annotations!["external-dns.alpha.kubernetes.io/hostname"], server)
        assert.deepStrictEqual(service.spec!.ports!.map((port) => port.name), ["execution-server"])
        yield* release
        yield* assertNothingLeft(cluster, sessionId)
      }),
    120_000
  )
})
