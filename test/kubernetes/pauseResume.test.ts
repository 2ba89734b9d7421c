/**
 * Pause deletes the pod and keeps the PVC and the key Secret; resume makes the pod again and waits
 * for it: files in the workspace survive, shell state (an exported variable) does not. Release
 * then deletes the pod, service and Secret but keeps the PVC (OpenHands' default), which
 * `deleteWorkspace: true` would have deleted too. A pod deleted by someone else shows at once as
 * a disconnect whose message says so.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect, Fiber, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { CmdOutputObservation, CmdRunAction, RuntimeDisconnectedError } from "../../src/index.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import {
  assertEngineClean,
  assertNothingLeft,
  namespace,
  noObjects,
  sessionObjects,
  standInLayer,
  useStandIn
} from "./helpers.ts"

describeDocker("KubernetesRuntime pause and resume (stand-in)", () => {
  const cluster = useStandIn()

  it.live(
    "keeps the workspace across pause and resume, not the shell's state; release keeps only the PVC",
    () =>
      Effect.gen(function*() {
        const sessionId = `pr-${randomBytes(4).toString("hex")}`
        const pod = `effect-sandbox-${sessionId}`
        const { rt, release } = yield* buildRuntime(standInLayer(cluster, { sessionId }))
        const run = (command: string) =>
          rt.run(new CmdRunAction({ command })).pipe(Effect.map((observation) => {
            assert.instanceOf(observation, CmdOutputObservation)
            return observation
          }))
        assert.strictEqual((yield* run("echo kept > /workspace/note.txt && export MOOD=set && echo ok")).exitCode, 0)

        yield* rt.pause
        assert.strictEqual(yield* rt.currentStatus, "PAUSED")
        const paused = yield* sessionObjects(cluster.kubeConfig, sessionId)
        assert.deepStrictEqual(paused, {
          pods: [],
          services: [`${pod}-svc`],
          secrets: [`${pod}-key`],
          ingresses: [],
          claims: [`${pod}-pvc`]
        })
        yield* assertEngineClean(cluster.standIn, false)

        yield* rt.resume
        assert.strictEqual(yield* rt.currentStatus, "READY")
        const after = yield* run("cat /workspace/note.txt; echo \"mood=${MOOD:-unset}\"")
        assert.strictEqual(after.content.trim(), "kept\nmood=unset")

        yield* release
        assert.deepStrictEqual(yield* sessionObjects(cluster.kubeConfig, sessionId), {
          ...noObjects,
          claims: [`${pod}-pvc`]
        })
        yield* assertEngineClean(cluster.standIn, false)
        const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
        yield* Effect.promise(() => core.deleteNamespacedPersistentVolumeClaim({ name: `${pod}-pvc`, namespace }))
        yield* assertEngineClean(cluster.standIn)
      }),
    240_000
  )

  it.live(
    "a pod deleted under the runtime is a disconnect that says so, and release still cleans up",
    () =>
      Effect.gen(function*() {
        const sessionId = `pr-${randomBytes(4).toString("hex")}`
        const { rt, release } = yield* buildRuntime(standInLayer(cluster, { sessionId, deleteWorkspace: true }))
        const statuses = yield* rt.status.pipe(
          Stream.takeUntil((s) => s === "ERROR_RUNTIME_DISCONNECTED"),
          Stream.runCollect,
          Effect.forkChild
        )
        const core = cluster.kubeConfig.makeApiClient(CoreV1Api)
        yield* Effect.promise(() => core.deleteNamespacedPod({ name: `effect-sandbox-${sessionId}`, namespace }))
        assert.deepStrictEqual(
          yield* Fiber.join(statuses),
          ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY", "ERROR_RUNTIME_DISCONNECTED"]
        )
        const error = yield* Effect.flip(rt.run(new CmdRunAction({ command: "echo too late" })))
        assert.instanceOf(error, RuntimeDisconnectedError)
        assert.include(error.message, "the pod is gone (deleted)")
        yield* release
        yield* assertNothingLeft(cluster, sessionId)
      }),
    120_000
  )
})
