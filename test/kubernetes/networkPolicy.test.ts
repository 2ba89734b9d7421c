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
import { InvalidOptionsError } from "../../src/index.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import { assertNothingLeft, namespace, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"

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
