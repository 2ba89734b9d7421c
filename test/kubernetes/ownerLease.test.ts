/**
 * The owner's Lease on a cluster (src/providers/kubernetes/ownerLease.ts), against
 * the stand-in through client-node: created with its labels, terms and holder,
 * renewed by the scoped heartbeat, deleted when the scope closes; and the
 * heartbeat keeping a Sandbox's `shutdownTime` ahead, so that once it stops the
 * cluster's own controller expires the Sandbox.
 */
import { assert, it } from "@effect/vitest"
import { CoordinationV1Api, CustomObjectsApi, type KubeConfig, type V1Lease } from "@kubernetes/client-node"
import { Effect } from "effect"
import { hostname } from "node:os"
import { createSandbox } from "../../src/engines/kubernetes/agentSandbox.ts"
import { acquireKubeOwnerLease } from "../../src/providers/kubernetes/ownerLease.ts"
import { describeCluster, eventually, namespace, onStandIn, servingTemplate } from "./lifecycle.ts"

const readLease = (kc: KubeConfig, name: string) =>
  Effect.promise(() =>
    kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name, namespace }).then(
      (lease): V1Lease | number => lease,
      (error: { code: number }) => error.code
    )
  )

const renewedAt = (lease: V1Lease | number) =>
  typeof lease === "number" ? Number.NaN : new Date(lease.spec!.renewTime as unknown as string).getTime()

const shutdownTimeOf = (kc: KubeConfig, name: string) =>
  Effect.promise(() =>
    kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: "agents.x-k8s.io",
      version: "v1alpha1",
      namespace,
      plural: "sandboxes",
      name
    }).then((sandbox: { spec: { shutdownTime: string } }) => Date.parse(sandbox.spec.shutdownTime), () => undefined)
  )

describeCluster("owner lease on a cluster", () => {
  it.live("creates a labelled Lease, renews it every renewEvery, and deletes it when the scope closes", () =>
    onStandIn((kc) =>
      Effect.gen(function*() {
        const name = yield* Effect.scoped(Effect.gen(function*() {
          const lease = yield* acquireKubeOwnerLease(kc, namespace, {
            renewEvery: "200 millis",
            staleAfter: "3 seconds"
          })
          assert.match(lease.name, /^effect-sandbox-owner-[0-9a-f]{10}$/)
          assert.deepStrictEqual(lease.labels, { "effect-sandbox.managed": "true", "effect-sandbox.owner": lease.name })
          const first = yield* readLease(kc, lease.name)
          assert.notStrictEqual(typeof first, "number")
          const stored = first as V1Lease
          assert.deepStrictEqual(stored.metadata?.labels, { "effect-sandbox.managed": "true" })
          assert.deepStrictEqual(stored.metadata?.annotations, { "effect-sandbox.renew-every-ms": "200" })
          assert.strictEqual(stored.spec?.holderIdentity, `${hostname()}/${process.pid}`)
          assert.strictEqual(stored.spec?.leaseDurationSeconds, 3)
          // Microseconds, as the apiserver writes MicroTime.
          assert.match(String(stored.spec?.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
          yield* Effect.sleep("700 millis")
          const later = renewedAt(yield* readLease(kc, lease.name))
          assert.isAtLeast(later - renewedAt(first), 400, "renewed at least twice in 700 ms")
          return lease.name
        }))
        assert.strictEqual(yield* readLease(kc, name), 404)
      })
    ))

  it.live(
    "keeps a Sandbox's shutdownTime ahead while alive; once the heartbeat stops, the cluster expires it",
    () =>
      onStandIn((kc) =>
        Effect.gen(function*() {
          const lease = yield* acquireKubeOwnerLease(kc, namespace, {
            renewEvery: "200 millis",
            staleAfter: "2 seconds"
          })
          const created = lease.shutdownTime()
          yield* createSandbox(kc, {
            name: "kept",
            namespace,
            labels: lease.labels,
            podTemplate: servingTemplate("kept"),
            shutdownTime: created
          }).pipe(Effect.orDie)
          const keeping = yield* Effect.scoped(Effect.gen(function*() {
            yield* lease.keepAlive({ kind: "Sandbox", name: "kept" })
            // Past its first shutdownTime: still there, pushed ahead by every beat.
            yield* Effect.sleep("3 seconds")
            return yield* shutdownTimeOf(kc, "kept")
          }))
          assert.isDefined(keeping, "the Sandbox expired while its owner renewed it")
          assert.isAbove(keeping!, Date.parse(created) + 2_000)
          // No longer kept alive: the controller deletes it (policy Delete) within one term.
          assert.isTrue(
            yield* eventually(async () => (await Effect.runPromise(shutdownTimeOf(kc, "kept"))) === undefined, 10_000),
            "the Sandbox outlived its shutdownTime"
          )
        })
      ),
    60_000
  )
})
