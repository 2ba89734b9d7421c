/**
 * The `secrets` option on a hosted runtime: checked once against the `network` option it needs, and
 * refused whole by a driver that does not put secrets on requests at its own edge
 * (`DriverDefinition.edgeSecrets`), and put to one that does, which refuses what its provider
 * cannot express.
 */
import { Effect } from "effect"
import { type EdgeSecret, parseEdgeSecrets, refuseSecrets } from "../network/edgeSecrets.ts"
import { type NetworkPolicy, parseNetworkPolicy } from "../network/policy.ts"
import type { DriverDefinition } from "../services/Driver.ts"

export const checkSecretsOption = Effect.fn("checkSecretsOption")(function*(
  runtime: string,
  definition: Pick<DriverDefinition<never, unknown>, "edgeSecrets" | "provider">,
  options: { readonly network?: NetworkPolicy; readonly secrets?: ReadonlyArray<EdgeSecret> }
) {
  if (definition.edgeSecrets === undefined) {
    return yield* refuseSecrets(
      runtime,
      options.secrets,
      `this runtime puts nothing on a ${definition.provider} sandbox's requests outside it (use DockerRuntime)`
    )
  }
  const secrets = yield* parseEdgeSecrets(runtime, options.secrets, yield* parseNetworkPolicy(runtime, options.network))
  if (secrets.length > 0) yield* definition.edgeSecrets(secrets)
})
