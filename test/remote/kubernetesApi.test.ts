/**
 * `effect-sandbox-runtime-api --provisioner kubernetes --proxy` against the Kubernetes stand-in
 * (test/kubernetes/standin/), driven by RemoteRuntime: a start (the image built through `/build`,
 * the pod made from the request's image and command), a command's exact output through the
 * proxy, a pause on release that deletes the pod and keeps the workspace, the API server killed
 * and started again (the session read back from the cluster: resumed, files kept; then attached
 * while running), and a stop that leaves no pod, service, Secret or (`--delete-workspace`) PVC.
 * Then, with a client written from §14 alone: our runtime image and server when `/start` names
 * none, an app port inside the sandbox reached through its `work_hosts` URL (the proxy's
 * `/<runtime_id>/work-1`) with its key only, a missing image as `pod_status` failed, and a command
 * that exits at once as failed with its exit code and last output (`last_output`). And
 * RemoteRuntime with `vscode: true`: port 8001 on the pod and its service, and the IDE through the
 * proxy and the stand-in's port-forward (vscodeProxy.ts's checks: no Chromium here).
 */
import { afterEach, assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { Runtime } from "../../src/index.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, noObjects, sessionObjects, useStandIn } from "../kubernetes/helpers.ts"
import { type ApiServer, apiServerLayer, call, newSessionId, run, startApiServer, waitReady } from "./apiServer.ts"
import {
  dyingCommand,
  expectExited,
  expectImageMissing,
  keepsSessionAcrossRestarts,
  startSandbox,
  stopSandboxes
} from "./kubernetesApiCases.ts"
import { expectProxiedVsCode, toolsRuntimeImage } from "./vscodeProxy.ts"

const KEY = randomBytes(16).toString("hex")
/** Node in our runtime image. */
const NODE = "/opt/effect-sandbox/bin/node"

describeDocker("effect-sandbox-runtime-api --provisioner kubernetes (stand-in)", () => {
  const cluster = useStandIn()
  const servers: Array<ApiServer> = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.kill()
  })

  const startServer = () =>
    Effect.promise(async () => {
      const server = await startApiServer(
        ["--provisioner", "kubernetes", "--proxy", "--namespace", "default", "--delete-workspace"],
        KEY,
        { KUBECONFIG: cluster.standIn.kubeconfigPath }
      )
      servers.push(server)
      return server
    })

  it.live(
    "runs a command, keeps files across pause/resume and API restarts, and stop leaves nothing",
    () =>
      Effect.gen(function*() {
        const sid = yield* keepsSessionAcrossRestarts({
          key: KEY,
          startServer: startServer(),
          objectsOf: (sessionId) => sessionObjects(cluster.kubeConfig, sessionId)
        })
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sid), noObjects)
        yield* assertEngineClean(cluster.standIn)
      }),
    300_000
  )

  it.live(
    "vscode: the IDE's port on the pod and its service, reached through the proxy with the token only; stop leaves nothing",
    () =>
      Effect.gen(function*() {
        const image = yield* toolsRuntimeImage
        const server = yield* startServer()
        const sid = newSessionId()
        yield* Effect.gen(function*() {
          const rt = yield* Runtime
          const session = (yield* Effect.promise(() => call(server.base, "GET", `/sessions/${sid}`, { key: KEY }))).body
          const objects = yield* sessionObjects(cluster.kubeConfig, sid)
          const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
          const [pod, service] = yield* Effect.promise(() =>
            Promise.all([
              core.readNamespacedPod({ name: objects.pods[0]!, namespace: "default" }),
              core.readNamespacedService({ name: objects.services[0]!, namespace: "default" })
            ])
          )
          assert.deepInclude(pod.spec!.containers[0]!.ports!, { name: "vscode", containerPort: 8001 })
          assert.include(service.spec!.ports!.map((port) => port.port), 8001)
          yield* expectProxiedVsCode({
            base: server.base,
            runtimeId: session["runtime_id"] as string,
            sessionKey: session["session_api_key"] as string,
            apiKey: KEY,
            url: rt.info.urls["vscode"]
          })
        }).pipe(Effect.provide(apiServerLayer(server.base, KEY, sid, { image, vscode: true })), Effect.scoped)
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sid), noObjects)
        yield* assertEngineClean(cluster.standIn)
      }),
    300_000
  )

  it.live(
    "starts our image and server by default; work_hosts reach an app port through the proxy with that sandbox's key only",
    () =>
      Effect.gen(function*() {
        const server = yield* startServer()
        const start = (body: Record<string, unknown>) => startSandbox(server.base, KEY, body)
        const [a, b, c, d] = [newSessionId(), newSessionId(), newSessionId(), newSessionId()]
        const sandboxA = yield* start({ session_id: a })
        const listed = yield* Effect.promise(() => call(server.base, "GET", "/list", { key: KEY }))
        const image = (listed.body["runtimes"] as Array<{ image: string }>)[0]!.image
        // B: OpenHands' way, an image and command given (a server that answers on 60000).
        const sandboxB = yield* start({
          session_id: b,
          image,
          command: [NODE, "-e", "require('http').createServer((q, r) => r.end('{}')).listen(60000)"]
        })
        const sandboxC = yield* start({ session_id: c, image: "effect-sandbox/no-such-image:1", command: ["true"] })
        // D: a command that exits at once, having said why.
        const sandboxD = yield* start({ session_id: d, image, command: dyingCommand(NODE) })
        assert.notStrictEqual(sandboxA.session_api_key, sandboxB.session_api_key)
        const workHost = `${server.base}/${sandboxA.runtime_id}/work-1`
        assert.deepStrictEqual(sandboxA.work_hosts, {
          [workHost]: 12000,
          [`${server.base}/${sandboxA.runtime_id}/work-2`]: 12001
        })
        yield* Effect.promise(() => waitReady(server.base, KEY, sandboxA.runtime_id))

        const app = "require('http').createServer((q, r) => r.end(JSON.stringify({ path: q.url, " +
          "key: q.headers['x-session-api-key'] ?? null }))).listen(12000)"
        const launched = yield* Effect.promise(() =>
          run(sandboxA.url, sandboxA.session_api_key, `(nohup ${NODE} -e "${app}" > /dev/null 2>&1 &); echo launched`)
        )
        assert.strictEqual(launched.body["content"], "launched")
        const get = (headers: Record<string, string>) =>
          Effect.promise(async () => {
            const response = await fetch(`${workHost}/page?x=1`, { headers })
            return { status: response.status, body: await response.json() as Record<string, unknown> }
          })
        let reached = yield* get({ "X-Session-API-Key": sandboxA.session_api_key })
        for (let attempt = 0; attempt < 40 && reached.status === 502; attempt++) {
          yield* Effect.sleep("250 millis")
          reached = yield* get({ "X-Session-API-Key": sandboxA.session_api_key })
        }
        // The app sees its own path, and never the sandbox's key.
        assert.deepStrictEqual(reached, { status: 200, body: { path: "/page?x=1", key: null } })
        for (const headers of [{ "X-Session-API-Key": sandboxB.session_api_key }, { "X-API-Key": KEY }, {}]) {
          assert.deepStrictEqual(yield* get(headers), { status: 403, body: { detail: "Invalid Session API Key" } })
        }

        yield* expectImageMissing(server.base, KEY, sandboxC.runtime_id)
        yield* expectExited(server.base, KEY, sandboxD.runtime_id)

        yield* stopSandboxes(server.base, KEY, [sandboxA, sandboxB, sandboxC, sandboxD])
        for (const sid of [a, b, c, d]) {
          assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sid), noObjects)
        }
        yield* assertEngineClean(cluster.standIn)
      }),
    300_000
  )
})
