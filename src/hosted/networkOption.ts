/**
 * The `network` option on a hosted runtime: parsed once, then each rule put to the driver, which
 * refuses what its provider cannot express; a driver that does not take the option refuses it whole.
 */
import { Effect } from "effect"
import { type NetworkPolicy, parseNetworkPolicy, refusePolicy } from "../network/policy.ts"
import type { DriverDefinition } from "../services/Driver.ts"

export const checkNetworkOption = Effect.fn("checkNetworkOption")(function*(
  runtime: string,
  definition: Pick<DriverDefinition<never, unknown>, "network" | "provider">,
  network: NetworkPolicy | undefined
) {
  const policy = yield* parseNetworkPolicy(runtime, network)
  if (policy === undefined) return
  if (definition.network === undefined) {
    return yield* refusePolicy(runtime, network, `${definition.provider} offers no egress control this runtime maps`)
  }
  yield* definition.network(policy)
})
