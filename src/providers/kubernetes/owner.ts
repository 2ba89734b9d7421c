/**
 * The owner's side of a runtime layer (or pool) on a cluster: its heartbeat Lease (ownerLease.ts),
 * acquired first so that it is released last, after every session it covers, and the reaper
 * (reaper.ts), which removes what owners proven dead left behind in the namespace. Both modules
 * load client-node themselves, so they are imported here, when a layer is built.
 */
import { type Duration, Effect } from "effect"
import type { Kube } from "../../engines/kubernetes/client.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { KubeOwnershipOptions } from "./options.ts"

/**
 * Hold the owner's Lease and run the reaper every `reapEvery` for as long as the scope lives; the
 * Lease's labels go on every object.
 */
export const acquireOwnership = Effect.fn("acquireOwnership")(function*(
  kube: Kube,
  options: KubeOwnershipOptions,
  reapEvery: Duration.Input
) {
  const [{ acquireKubeOwnerLease }, { startKubeReaper }] = yield* Effect.tryPromise({
    try: () => Promise.all([import("./ownerLease.ts"), import("./reaper.ts")]),
    catch: (cause) => new RuntimeStartError({ message: `Cannot load the owner lease: ${(cause as Error).message}` })
  })
  const lease = yield* acquireKubeOwnerLease(kube.config, kube.namespace, options)
  yield* startKubeReaper(kube.config, kube.namespace, reapEvery, options)
  return lease
})
