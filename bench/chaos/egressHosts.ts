/**
 * The egress group's destinations: this host, at its address on the sandboxes' bridge and on the
 * default bridge (test/docker/egressHosts.ts), never an outside address.
 */
import { Effect } from "effect"
import { connectEngine, DockerEngine } from "../../src/engines/docker/engine.ts"
import { ensureIsolatedNetwork, SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"
import { gatewayOf } from "../../test/docker/egressHosts.ts"

/** The host's two addresses: on the sandboxes' bridge (made first if missing), and on the default one. */
export const hostAddresses = async (): Promise<{ readonly sandboxBridge: string; readonly defaultBridge: string }> => {
  await Effect.runPromise(
    Effect.gen(function*() {
      const engine = yield* connectEngine
      yield* ensureIsolatedNetwork(SANDBOX_NETWORK).pipe(Effect.provideService(DockerEngine, engine))
    })
  )
  return { sandboxBridge: gatewayOf(SANDBOX_NETWORK), defaultBridge: gatewayOf("bridge") }
}
