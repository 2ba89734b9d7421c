/**
 * `effect-sandbox-runtime-api --provisioner kubernetes --proxy` against the Kubernetes stand-in
 * (test/kubernetes/standin/), driven by RemoteRuntime: a start (the image built through `/build`,
 * the pod made from the request's image and command), a command's exact output through the
 * proxy, a pause on release that deletes the pod and keeps the workspace, the API server killed
 * and started again (the session read back from the cluster: resumed, files kept; then attached
 * while running), and a stop that leaves no pod, service, Secret or (`--delete-workspace`) PVC.
 * Then, with a client written from §14 alone: our runtime image and server when `/start` names
 * none, an app port inside the sandbox reached through its `work_hosts` URL (the proxy's
 * `/<runtime_id>/work-1`) with its key only, and a missing image as `pod_status` failed. And
 * RemoteRuntime with `vscode: true`: port 8001 on the pod and its service, and the IDE through the
 * proxy and the stand-in's port-forward (vscodeProxy.ts's checks: no Chromium here).
 */
import { afterEach, assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect, type Layer } from "effect"
import { randomBytes } from "node:crypto"
import { CmdOutputObservation, Runtime } from "../../src/index.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, noObjects, sessionObjects, useStandIn } from "../kubernetes/helpers.ts"
import {
  type ApiServer,
  apiServerLayer,
  call,
  newSessionId,
  run,
  startApiServer,
  type Started,
  waitReady
} from "./apiServer.ts"
import { keptAlive } from "./helpers.ts"
import { expectProxiedVsCode, toolsRuntimeImage } from "./vscodeProxy.ts"

const KEY = randomBytes(16).toString("hex")
/** Node in our runtime image. */
const NODE = "/opt/effect-sandbox/bin/node"

/** The command's output and exit code on a runtime of `layer`, released afterwards. */
const runOn = (layer: Layer.Layer<Runtime, unknown>, command: string) =>
  Effect.gen(function*() {
    const observation = yield* (yield* Runtime).runCommand(command)
    assert.instanceOf(observation, CmdOutputObservation)
    return { content: observation.content.trim(), exitCode: observation.metadata.exitCode }
  }).pipe(Effect.provide(layer))

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
        const sid = newSessionId()
        const first = yield* startServer()
        const written = yield* runOn(
          apiServerLayer(first.base, KEY, sid, { sandbox: keptAlive }),
          "echo kept > /workspace/note.txt && echo remote-$((20+22))"
        )
        assert.deepStrictEqual(written, { content: "remote-42", exitCode: 0 })

        // Paused on release: the pod deleted, the Secret (the sandbox's record), service and PVC kept.
        const paused = yield* sessionObjects(cluster.kubeConfig, sid)
        assert.deepStrictEqual(paused.pods, [])
        assert.strictEqual(paused.secrets.length, 1)
        assert.strictEqual(paused.services.length, 1)
        assert.strictEqual(paused.claims.length, 1)

        // A new API server reads the session back from the cluster and resumes it.
        yield* Effect.promise(() => first.kill())
        const second = yield* startServer()
        const session = yield* Effect.promise(() => call(second.base, "GET", `/sessions/${sid}`, { key: KEY }))
        assert.strictEqual(session.body["status"], "paused")
        const resumed = yield* runOn(
          apiServerLayer(second.base, KEY, sid, { sandbox: keptAlive, pauseClosedRuntimes: false }),
          "cat /workspace/note.txt"
        )
        assert.deepStrictEqual(resumed, { content: "kept", exitCode: 0 })

        // Left running; a third API server serves the running session, whose release stops it.
        yield* Effect.promise(() => second.kill())
        const third = yield* startServer()
        const attached = yield* runOn(apiServerLayer(third.base, KEY, sid), "cat /workspace/note.txt")
        assert.deepStrictEqual(attached, { content: "kept", exitCode: 0 })
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sid), noObjects)
        const gone = yield* Effect.promise(() => call(third.base, "GET", `/sessions/${sid}`, { key: KEY }))
        assert.strictEqual(gone.status, 404)
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
        const start = (body: Record<string, unknown>) =>
          Effect.promise(async () => {
            const answer = await call(server.base, "POST", "/start", { key: KEY, body })
            assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
            return answer.body as unknown as Started
          })
        const [a, b, c] = [newSessionId(), newSessionId(), newSessionId()]
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

        let missing = yield* Effect.promise(() =>
          call(server.base, "GET", `/runtime/${sandboxC.runtime_id}`, { key: KEY })
        )
        for (let attempt = 0; attempt < 40 && missing.body["pod_status"] === "pending"; attempt++) {
          yield* Effect.sleep("250 millis")
          missing = yield* Effect.promise(() =>
            call(server.base, "GET", `/runtime/${sandboxC.runtime_id}`, { key: KEY })
          )
        }
        assert.strictEqual(missing.body["pod_status"], "failed")
        assert.match(
          String((missing.body["restart_reasons"] as Array<string>)[0]),
          /^(ErrImagePull|ImagePullBackOff): /
        )

        for (const started of [sandboxA, sandboxB, sandboxC]) {
          const stopped = yield* Effect.promise(() =>
            call(server.base, "POST", "/stop", { key: KEY, body: { runtime_id: started.runtime_id } })
          )
          assert.strictEqual(stopped.status, 200)
        }
        for (const sid of [a, b, c]) assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sid), noObjects)
        yield* assertEngineClean(cluster.standIn)
      }),
    300_000
  )
})
