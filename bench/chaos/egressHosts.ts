/**
 * The egress group's destinations: this host, at its address on the sandboxes' bridge and on the
 * default bridge (`docker network inspect`'s gateways), never an outside address.
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { connectEngine, DockerEngine } from "../../src/engines/docker/engine.ts"
import { ensureIsolatedNetwork, SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"

/** The host's address on a Docker network (its bridge's gateway). */
const gatewayOf = (network: string) =>
  new Promise<string>((resolve) =>
    execFile(
      "docker",
      ["network", "inspect", network, "--format", "{{range .IPAM.Config}}{{.Gateway}}{{end}}"],
      (_, out) => resolve(String(out).trim())
    )
  )

/** The host's two addresses: on the sandboxes' bridge (made first if missing), and on the default one. */
export const hostAddresses = async (): Promise<{ readonly sandboxBridge: string; readonly defaultBridge: string }> => {
  await Effect.runPromise(
    Effect.gen(function*() {
      const engine = yield* connectEngine
      yield* ensureIsolatedNetwork(SANDBOX_NETWORK).pipe(Effect.provideService(DockerEngine, engine))
    })
  )
  return { sandboxBridge: await gatewayOf(SANDBOX_NETWORK), defaultBridge: await gatewayOf("bridge") }
}
