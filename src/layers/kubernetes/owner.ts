/**
 * The owner's side of a runtime layer (or pool) on a cluster: its heartbeat Lease (ownerLease.ts),
 * acquired first so that it is released last, after every session it covers, and the reaper
 * (reaper.ts), which removes what owners proven dead left behind in the namespace. Both modules
 * load client-node themselves, so they are imported here, when a layer is built.
 */
import { Effect } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { Kube } from "./client.ts"
import type { KubeOwnershipOptions } from "./ownershipOptions.ts"

/** Hold the owner's Lease and run the reaper for as long as the scope lives; the Lease's labels go on every object. */
export const acquireOwnership = Effect.fn("acquireOwnership")(function*(
  kube: Kube,
  options: KubeOwnershipOptions = {}
) {
  const [{ acquireKubeOwnerLease }, { startKubeReaper }] = yield* Effect.tryPromise({
    try: () => Promise.all([import("./ownerLease.ts"), import("./reaper.ts")]),
    catch: (cause) => new RuntimeStartError({ message: `Cannot load the owner lease: ${(cause as Error).message}` })
  })
  const lease = yield* acquireKubeOwnerLease(kube.config, kube.namespace, options)
  yield* startKubeReaper(kube.config, kube.namespace, options)
  return lease
})
