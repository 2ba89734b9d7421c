/**
 * `effect-sandbox-runtime-api --provisioner kubernetes --proxy` against the Kubernetes stand-in
 * (test/kubernetes/standin/), driven by RemoteRuntime: a start (the image built through `/build`,
 * the pod made from the request's image and command), a command's exact output through the
 * proxy, a pause on release that deletes the pod and keeps the workspace, the API server killed
 * and started again (the session read back from the cluster: resumed, files kept; then attached
 * while running), and a stop that leaves no pod, service, Secret or (`--delete-workspace`) PVC.
 */
import { afterEach, assert, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomBytes } from "node:crypto"
import { CmdOutputObservation, Runtime } from "../../src/index.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, noObjects, sessionObjects, useStandIn } from "../kubernetes/helpers.ts"
import { type ApiServer, apiServerLayer, call, newSessionId, startApiServer } from "./apiServer.ts"

const KEY = randomBytes(16).toString("hex")

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
          apiServerLayer(first.base, KEY, sid, { keepRuntimeAlive: true }),
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
          apiServerLayer(second.base, KEY, sid, { keepRuntimeAlive: true, pauseClosedRuntimes: false }),
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
})
