/**
 * `effect-sandbox-runtime-api --provisioner kubernetes --proxy` on a real cluster (opt-in as
 * live.test.ts: `EFFECT_SANDBOX_K8S_LIVE=1`, the kubeconfig, `EFFECT_SANDBOX_K8S_IMAGE` the runtime
 * image the cluster has; `npm run test:kubernetes-real` runs it as the docs' Role), reaching pods
 * through port-forwards. RemoteRuntime, our client of OpenHands' remote-runtime protocol: a command's
 * exact output through the proxy, a pause on release (pod deleted, workspace PVC kept), the API
 * server killed and started again (the session read back from the cluster and resumed, files kept;
 * then attached while running), and a stop that leaves nothing. Then a client written from §14
 * alone: `/start` with an image and command of its own, an action through the proxy, a missing
 * image reported as `pod_status` failed with the kubelet's reason, a command that exits at once
 * as failed with its exit code and last output, and `/stop` of each. The two
 * cases run side by side: each is mostly waiting on the cluster (pods made and deleted).
 */
import { assert, describe, it } from "@effect/vitest"
import { KubeConfig } from "@kubernetes/client-node"
import { Effect, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import { type ApiServer, newSessionId, run, startApiServer, waitReady } from "../../remote/apiServer.ts"
import {
  dyingCommand,
  expectExited,
  expectImageMissing,
  keepsSessionAcrossRestarts,
  startSandbox,
  stopSandboxes
} from "../../remote/kubernetesApiCases.ts"
import { assertObjectsGone, sessionObjects } from "../helpers.ts"

const KEY = randomBytes(16).toString("hex")
/** Node in our runtime image. */
const NODE = "/opt/effect-sandbox/bin/node"

const optedIn = process.env["EFFECT_SANDBOX_K8S_LIVE"] === "1"
const kubeconfig = process.env["KUBECONFIG"]
const image = process.env["EFFECT_SANDBOX_K8S_IMAGE"]
const namespace = process.env["EFFECT_SANDBOX_K8S_NAMESPACE"] ?? "default"
if (optedIn && (kubeconfig === undefined || image === undefined)) {
  throw new Error(
    "EFFECT_SANDBOX_K8S_LIVE=1 needs KUBECONFIG and EFFECT_SANDBOX_K8S_IMAGE (npm run test:kubernetes-real)"
  )
}

;(optedIn ? describe.concurrent : describe.skip)(
  `effect-sandbox-runtime-api --provisioner kubernetes (live cluster)${
    optedIn ? "" : " (skipped: EFFECT_SANDBOX_K8S_LIVE=1 is not set; see docs/runtimes/kubernetes.md)"
  }`,
  () => {
    const kubeConfig = new KubeConfig()
    if (optedIn) kubeConfig.loadFromFile(kubeconfig!)
    const objectsOf = (sid: string) => sessionObjects(kubeConfig, sid, namespace)
    /**
     * `body` with a starter of API servers, each killed when the body ends: cases may run side by
     * side (npm run test:kubernetes-real runs several at once), so each kills only its own.
     */
    const withServers = <A, E>(
      body: (startServer: Effect.Effect<ApiServer>) => Effect.Effect<A, E, Scope.Scope>
    ) => {
      const servers: Array<ApiServer> = []
      const startServer = Effect.promise(async () => {
        const server = await startApiServer(
          [
            "--provisioner",
            "kubernetes",
            "--proxy",
            "--kube-connect",
            "port-forward",
            "--namespace",
            namespace,
            "--delete-workspace",
            "--cpus",
            "0.1"
          ],
          KEY,
          { KUBECONFIG: kubeconfig!, SANDBOX_RUNTIME_CONTAINER_IMAGE: image! }
        )
        servers.push(server)
        return server
      })
      // The case's sandboxes are stopped (its scope) before its API servers go.
      return Effect.scoped(body(startServer)).pipe(Effect.ensuring(Effect.promise(async () => {
        for (const server of servers) await server.kill()
      })))
    }

    it.live(
      "RemoteRuntime runs a command, keeps files across pause/resume and API restarts, and stop leaves nothing",
      () =>
        withServers((startServer) =>
          Effect.gen(function*() {
            const sid = yield* keepsSessionAcrossRestarts({ key: KEY, startServer, objectsOf, more: { image: image! } })
            yield* assertObjectsGone(objectsOf(sid))
          })
        ),
      300_000
    )

    it.live(
      "a §14 client starts its own image and command, runs an action, sees a missing image and a dying command fail; stop leaves nothing",
      () =>
        withServers((startServer) =>
          Effect.gen(function*() {
            const server = yield* startServer
            const start = (body: Record<string, unknown>) => startSandbox(server.base, KEY, body)
            const [a, b, c, d] = [newSessionId(), newSessionId(), newSessionId(), newSessionId()]
            // A: our image and server (the API's default image is the one the cluster has).
            const sandboxA = yield* start({ session_id: a })
            // B: OpenHands' way, an image and command given (a server that answers on 60000).
            const sandboxB = yield* start({
              session_id: b,
              image: image!,
              command: [NODE, "-e", "require('http').createServer((q, r) => r.end('{}')).listen(60000)"]
            })
            const sandboxC = yield* start({ session_id: c, image: "effect-sandbox/no-such-image:1", command: ["true"] })
            // D: a command that exits at once, having said why.
            const sandboxD = yield* start({ session_id: d, image: image!, command: dyingCommand(NODE) })
            assert.notStrictEqual(sandboxA.session_api_key, sandboxB.session_api_key)

            yield* Effect.promise(() => waitReady(server.base, KEY, sandboxA.runtime_id))
            const echoed = yield* Effect.promise(() =>
              run(sandboxA.url, sandboxA.session_api_key, "echo pod-$((6*7)) && id -u")
            )
            assert.strictEqual(echoed.status, 200)
            assert.strictEqual(echoed.body["content"], "pod-42\n74289")

            yield* expectImageMissing(server.base, KEY, sandboxC.runtime_id)
            yield* expectExited(server.base, KEY, sandboxD.runtime_id)

            yield* stopSandboxes(server.base, KEY, [sandboxA, sandboxB, sandboxC, sandboxD])
            for (const sid of [a, b, c, d]) yield* assertObjectsGone(objectsOf(sid))
          })
        ),
      300_000
    )
  }
)
