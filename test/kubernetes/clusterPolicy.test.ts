/**
 * What a cluster's policy asks of a session's pod, enforced by the stand-in's admission
 * (standin/admission.ts): a namespace labelled Pod Security `restricted` admits it (non-root,
 * the runtime's default seccomp profile, no privilege escalation, every capability dropped), and
 * so does a ResourceQuota on CPU and memory limits (the pod names both); a pod past the quota is
 * refused with the apiserver's words, as the provider's `quota`.
 */
import { assert, it } from "@effect/vitest"
import { CoreV1Api } from "@kubernetes/client-node"
import { Effect, Layer } from "effect"
import { CmdOutputObservation, CmdRunAction, RuntimeStartError } from "../../src/index.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { sessionIdOf, sessionObjects, standInLayer, useStandIn } from "./helpers.ts"
import { ENFORCE_LABEL } from "./standin/admission.ts"

const RESTRICTED = "restricted"

describeDocker("KubernetesRuntime under a cluster's policy (stand-in)", () => {
  const cluster = useStandIn({ namespaces: { [RESTRICTED]: { [ENFORCE_LABEL]: "restricted" } } })

  /** A ResourceQuota on the namespace's CPU and memory limits, removed with the scope. */
  const quota = (hard: Record<string, string>) =>
    Effect.acquireRelease(
      Effect.promise(() =>
        cluster.kubeConfig.makeApiClient(CoreV1Api).createNamespacedResourceQuota({
          namespace: RESTRICTED,
          body: { metadata: { name: "compute" }, spec: { hard } }
        })
      ),
      () =>
        Effect.promise(() =>
          cluster.kubeConfig.makeApiClient(CoreV1Api).deleteNamespacedResourceQuota({
            name: "compute",
            namespace: RESTRICTED
          })
        )
    )

  it.live(
    "a restricted namespace with a quota on CPU and memory limits admits the session's pod",
    () =>
      Effect.gen(function*() {
        yield* quota({ "limits.cpu": "4", "limits.memory": "8Gi", "requests.cpu": "2" })
        const sessionId = sessionIdOf("psa")
        const { rt, release } = yield* buildRuntime(
          standInLayer(cluster, { sessionId, namespace: RESTRICTED, deleteWorkspace: true })
        )
        const out = yield* rt.run(
          new CmdRunAction({ command: "id -u; grep -E '^(NoNewPrivs|Seccomp|CapEff):' /proc/self/status" })
        )
        assert.instanceOf(out, CmdOutputObservation)
        assert.strictEqual(out.content.trim(), "74289\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2")
        yield* release
        assert.deepStrictEqual(
          (yield* sessionObjects(cluster.kubeConfig, sessionId, RESTRICTED)).pods,
          []
        )
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a pod past the quota is refused with the apiserver's words, as the provider's quota",
    () =>
      Effect.gen(function*() {
        yield* quota({ "limits.cpu": "1" })
        const sessionId = sessionIdOf("quota")
        const error = yield* Effect.scoped(
          Layer.build(standInLayer(cluster, { sessionId, namespace: RESTRICTED, deleteWorkspace: true }))
        ).pipe(Effect.flip)
        assert.instanceOf(error, RuntimeStartError)
        assert.include(
          error.message,
          `pods "effect-sandbox-${sessionId}" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=0, limited: limits.cpu=1`
        )
        assert.strictEqual(error.provider?.reason, "quota")
        assert.strictEqual(error.provider?.status, 403)
        assert.deepStrictEqual((yield* sessionObjects(cluster.kubeConfig, sessionId, RESTRICTED)).pods, [])
      }).pipe(Effect.scoped),
    120_000
  )
})
