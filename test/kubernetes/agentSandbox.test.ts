/**
 * The agent-sandbox mode against the stand-in, through client-node: discovery
 * with and without the CRDs; a Sandbox from a pod template becoming ready with a
 * pod IP that serves; suspend (pod gone) and resume (served again); a claim
 * taking a ready Sandbox from a SandboxWarmPool; a pod that cannot start failing
 * with its reason; and nothing left once the scopes close.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node"
import { Effect } from "effect"
import {
  claimSandbox,
  createSandbox,
  detect,
  resume,
  suspend,
  waitReady
} from "../../src/engines/kubernetes/agentSandbox.ts"
import { pullFailed } from "./helpers.ts"
import {
  describeCluster,
  eventually,
  extensionObject,
  kubeConfigOf,
  namespace,
  onStandIn,
  podNames,
  servingTemplate,
  warmPoolReady
} from "./lifecycle.ts"
import { standIn } from "./standin/server.ts"

const fetchText = (url: string) => Effect.promise(() => fetch(url).then((response) => response.text()))
const pods = (kc: Parameters<typeof podNames>[0]) => Effect.promise(() => podNames(kc))

describeCluster("agent-sandbox mode", () => {
  it.live("detects the agent-sandbox CRDs by discovery, their absence, and other versions", () =>
    Effect.scoped(Effect.gen(function*() {
      const withCrds = yield* standIn()
      const without = yield* standIn({ agentSandbox: false })
      const beta = yield* standIn({ agentSandboxVersion: "v1beta1" })
      assert.deepStrictEqual(yield* detect(kubeConfigOf(withCrds.kubeconfigPath)), {
        sandboxes: true,
        claims: true,
        versions: { sandboxes: ["v1alpha1"], claims: ["v1alpha1"] }
      })
      assert.deepStrictEqual(yield* detect(kubeConfigOf(without.kubeconfigPath)), {
        sandboxes: false,
        claims: false,
        versions: { sandboxes: [], claims: [] }
      })
      assert.deepStrictEqual(yield* detect(kubeConfigOf(beta.kubeconfigPath)), {
        sandboxes: false,
        claims: false,
        versions: { sandboxes: ["v1beta1"], claims: ["v1beta1"] }
      })
    })))

  it.live(
    "creates a Sandbox that serves from its pod IP, suspends it (pod gone), resumes it and removes it",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          const ref = yield* createSandbox(kc, {
            name: "box",
            namespace,
            labels: { "effect-sandbox.managed": "true" },
            podTemplate: servingTemplate("first")
          })
          const ready = yield* waitReady(kc, ref, { timeout: "60 seconds" })
          assert.strictEqual(ready.podName, "box")
          assert.strictEqual(ready.serviceFQDN, undefined)
          assert.strictEqual(yield* fetchText(`http://${ready.podIP}:8000/`), "first\n")

          yield* suspend(kc, ref)
          assert.deepStrictEqual(yield* pods(kc), [])
          const sandbox: { status: { conditions: Array<{ reason: string }> } } = yield* Effect.promise(() =>
            kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
              group: "agents.x-k8s.io",
              version: "v1alpha1",
              namespace,
              plural: "sandboxes",
              name: "box"
            })
          )
          assert.strictEqual(sandbox.status.conditions[0]!.reason, "SandboxSuspended")

          const resumed = yield* resume(kc, ref, { timeout: "60 seconds" })
          assert.strictEqual(yield* fetchText(`http://${resumed.podIP}:8000/`), "first\n")
        })
      ),
    90_000
  )

  it.live(
    "claims a ready Sandbox from a SandboxWarmPool, and the claim's release removes it",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          yield* extensionObject(kc, "sandboxtemplates", {
            metadata: { name: "tpl" },
            spec: { podTemplate: servingTemplate("warm") }
          })
          yield* extensionObject(kc, "sandboxwarmpools", {
            metadata: { name: "pool" },
            spec: { replicas: 1, sandboxTemplateRef: { name: "tpl" } }
          })
          const warm = yield* warmPoolReady(kc, "pool", 60_000)
          assert.isTrue(warm, "the warm pool never had a ready Sandbox")
          const [pooled] = yield* pods(kc)

          const claimedPod = yield* Effect.scoped(Effect.gen(function*() {
            const ref = yield* claimSandbox(kc, {
              name: "claim",
              namespace,
              templateName: "tpl",
              warmPool: "pool",
              labels: { "effect-sandbox.managed": "true" }
            })
            // Adopted, not made anew: the pool's ready Sandbox, whose pod already runs.
            assert.strictEqual(ref.name, pooled)
            assert.strictEqual(ref.claim, "claim")
            const ready = yield* waitReady(kc, ref, { timeout: "30 seconds" })
            assert.strictEqual(yield* fetchText(`http://${ready.podIP}:8000/`), "warm\n")
            return ready.podName
          }))
          // Released: the claim, its Sandbox and its pod are gone (the pool has made a new one meanwhile).
          assert.notInclude(yield* pods(kc), claimedPod)
        })
      ),
    120_000
  )

  it.live(
    "a Sandbox whose pod cannot start fails with the Sandbox's condition and the pod's reason; a failed pull or one never ready times out naming it",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          const missing = servingTemplate("never")
          missing.spec!.containers[0]!.image = "effect-sandbox/no-such-image:1"
          const crashing = servingTemplate("never")
          crashing.spec!.containers[0]!.command = ["sh", "-c", "echo bye; exit 3"]
          const pull = yield* createSandbox(kc, { name: "nopull", namespace, labels: {}, podTemplate: missing })
          const crash = yield* createSandbox(kc, { name: "crash", namespace, labels: {}, podTemplate: crashing })
          const crashError = yield* Effect.flip(waitReady(kc, crash))
          // A failed pull may pass (a registry's blip): waited out, and named when the time-out comes.
          const pulling = yield* eventually(async () => {
            const pod = await kc.makeApiClient(CoreV1Api).readNamespacedPod({ name: "nopull", namespace }).catch(() =>
              undefined
            )
            return pod !== undefined && pullFailed(pod)
          }, 60_000)
          assert.isTrue(pulling, "the pod's pull never failed")
          const pullError = yield* Effect.flip(waitReady(kc, pull, { timeout: "1 second" }))
          assert.strictEqual(pullError._tag, "RuntimeStartError")
          assert.match(
            pullError.message,
            /^Sandbox default\/nopull is Ready=False DependenciesNotReady: Pod exists with phase: Pending; pod nopull: (ErrImagePull|ImagePullBackOff): .*effect-sandbox\/no-such-image:1.* \(still not ready after 1s\)$/
          )
          // Running but never ready (nothing listens where the probe looks): the timeout names the last state.
          const unready = servingTemplate("never")
          unready.spec!.containers[0]!.command = ["sleep", "300"]
          const slow = yield* createSandbox(kc, { name: "unready", namespace, labels: {}, podTemplate: unready })
          // Its container started first (a loaded machine takes seconds): the 2 s below are not-ready time only.
          const running = yield* eventually(
            async () =>
              (await kc.makeApiClient(CoreV1Api).readNamespacedPod({ name: "unready", namespace }).catch(() =>
                undefined
              ))
                ?.status?.phase ===
                "Running",
            60_000
          )
          assert.isTrue(running, "the unready pod never ran")
          const timedOut = yield* Effect.flip(waitReady(kc, slow, { timeout: "2 seconds" }))
          assert.strictEqual(
            timedOut.message,
            "Sandbox default/unready is Ready=False DependenciesNotReady: Pod exists with phase: Running (still not ready after 2s)"
          )
          assert.match(
            crashError.message,
            /^Sandbox default\/crash is Ready=False DependenciesNotReady: .*; pod crash: (the container exited: exit code 3 \(Error\)|CrashLoopBackOff: .* \(last run: exit code 3 \(Error\)\))$/
          )
        })
      ),
    90_000
  )
})
