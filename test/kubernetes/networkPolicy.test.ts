/**
 * The `network` option on KubernetesRuntime (stand-in): the session's NetworkPolicy is made before
 * its pod, selects it by the session label, lists only the allow list's CIDR blocks as egress (none
 * for deny-all), and is deleted with the session; a host name is refused at start, naming the rule,
 * before anything is made. The stand-in stores NetworkPolicies without enforcing them (its
 * README): what reaches what is the real cluster's phase and docs/network.md's.
 */
import { assert, it } from "@effect/vitest"
import { NetworkingV1Api } from "@kubernetes/client-node"
import { Effect } from "effect"
import { InvalidOptionsError, SandboxConfig } from "../../src/index.ts"
import { KubernetesRuntime } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertEngineClean, assertNothingLeft, namespace, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"
import { kubeConfigOf } from "./lifecycle.ts"
import { docsRole } from "./standin/rbac.ts"
import { standIn } from "./standin/server.ts"

describeDocker("KubernetesRuntime network option (stand-in)", () => {
  const cluster = useStandIn()
  const policiesOf = (sessionId: string) =>
    Effect.promise(() =>
      cluster.kubeConfig.makeApiClient(NetworkingV1Api).listNamespacedNetworkPolicy({
        namespace,
        labelSelector: `effect-sandbox.session=${sessionId}`
      })
    ).pipe(Effect.map((list) => list.items))

  it.live(
    "an allow list of CIDR blocks is the pod's NetworkPolicy, deleted with the session",
    () =>
      Effect.gen(function*() {
        const sessionId = sessionIdOf("np")
        const { release } = yield* buildRuntime(
          standInLayer(cluster, {
            sessionId,
            deleteWorkspace: true,
            network: { allowOnly: ["10.1.0.0/16", "fd00::1"] }
          })
        )
        const [policy, ...others] = yield* policiesOf(sessionId)
        assert.deepStrictEqual(others, [])
        assert.strictEqual(policy?.metadata?.name, `effect-sandbox-${sessionId}-egress`)
        assert.deepStrictEqual(policy?.spec, {
          podSelector: { matchLabels: { "effect-sandbox.session": sessionId } },
          policyTypes: ["Egress"],
          egress: [{ to: [{ ipBlock: { cidr: "10.1.0.0/16" } }, { ipBlock: { cidr: "fd00::1/128" } }] }]
        })
        yield* release
        assert.deepStrictEqual(yield* policiesOf(sessionId), [])
        yield* assertNothingLeft(cluster, sessionId)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "after attach, release deletes the session's policy; a session without one releases under a Role without networkpolicies",
    () =>
      Effect.gen(function*() {
        const kept = sessionIdOf("np")
        const first = yield* buildRuntime(
          standInLayer(cluster, {
            sessionId: kept,
            sandbox: new SandboxConfig({ keepRuntimeAlive: true }),
            network: "deny-all"
          })
        )
        yield* first.release
        assert.lengthOf(yield* policiesOf(kept), 1)
        const attached = yield* buildRuntime(
          KubernetesRuntime.attach(kept, { kubeConfig: cluster.kubeConfig, deleteWorkspace: true })
        )
        yield* attached.release
        assert.deepStrictEqual(yield* policiesOf(kept), [])
        yield* assertNothingLeft(cluster, kept)

        // A user's Role from before the option: no verb on networkpolicies.
        const strict = yield* standIn({
          rbac: docsRole().map((rule) => ({
            ...rule,
            resources: rule.resources.filter((resource) => resource !== "networkpolicies")
          }))
        })
        const plain = sessionIdOf("np")
        const layerOptions = { kubeConfig: kubeConfigOf(strict.kubeconfigPath), namespace, baseImage: cluster.image }
        const made = yield* buildRuntime(
          KubernetesRuntime.layer({
            ...layerOptions,
            sessionId: plain,
            sandbox: new SandboxConfig({ keepRuntimeAlive: true })
          })
        )
        yield* made.release
        const again = yield* buildRuntime(KubernetesRuntime.attach(plain, { ...layerOptions, deleteWorkspace: true }))
        yield* again.release
        // Released whole (its pod's container gone), without a call the Role would refuse.
        yield* assertEngineClean(strict)
        assert.deepStrictEqual(
          strict.requests.filter((r) => r.method === "DELETE" && r.url.includes("networkpolicies")),
          []
        )
      }).pipe(Effect.scoped),
    180_000
  )

  it.live("a host name is refused at start, before anything is made", () =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("np")
      const error = yield* Effect.flip(
        buildRuntime(standInLayer(cluster, { sessionId, network: { allowOnly: ["10.1.0.0/16", "pypi.org"] } }))
      )
      assert.instanceOf(error, InvalidOptionsError)
      assert.strictEqual(
        (error as InvalidOptionsError).message,
        "KubernetesRuntime options: network: KubernetesRuntime cannot enforce the rule \"pypi.org\": a NetworkPolicy's " +
          "egress rules take CIDR blocks, not names (it sees the address a connection goes to, not the name asked for)."
      )
      assert.deepStrictEqual(yield* policiesOf(sessionId), [])
      yield* assertNothingLeft(cluster, sessionId)
    }).pipe(Effect.scoped))
})
