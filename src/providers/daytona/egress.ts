/**
 * The `network` option on Daytona (docs/network.md), through the SDK's create parameters:
 * `"deny-all"` is `networkBlockAll`; `allowOnly` puts IPv4 blocks in `networkAllowList` (at most
 * five, as Daytona takes) and host names in `domainAllowList`, both comma-separated. Wildcard
 * domains and IPv6 rules are refused at start: this runtime does not map them to Daytona.
 */
import { Effect } from "effect"
import { cidrBlocks, type EgressPolicy, refuseRules, wildcardOrIpv6 } from "../../network/policy.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"

/** Daytona's limit on `networkAllowList`. */
export const MAX_NETWORK_ALLOW = 5

/** The rules Daytona cannot take refused (the driver definition's `network`). */
export const checkDaytonaEgress = (policy: EgressPolicy) => {
  const blocks = cidrBlocks(policy).length
  return refuseRules(
    "DaytonaRuntime",
    policy,
    wildcardOrIpv6,
    "Daytona's networkAllowList takes IPv4 blocks and its domainAllowList host names, as this runtime maps them"
  ).pipe(Effect.andThen(
    blocks <= MAX_NETWORK_ALLOW ? Effect.void : Effect.fail(
      new InvalidOptionsError({
        message: `DaytonaRuntime options: network: Daytona's networkAllowList takes at most ${MAX_NETWORK_ALLOW} ` +
          `blocks (${blocks} given).`
      })
    )
  ))
}

/** The create parameters that carry the policy (none without one). */
export const daytonaEgress = (policy: EgressPolicy | undefined) => {
  if (policy === undefined) return {}
  if (policy._tag === "DenyAll") return { networkBlockAll: true }
  const hosts = policy.rules.flatMap((rule) => rule._tag === "Host" ? [rule.host] : [])
  const blocks = cidrBlocks(policy)
  return {
    ...(blocks.length === 0 ? {} : { networkAllowList: blocks.join(",") }),
    ...(hosts.length === 0 ? {} : { domainAllowList: hosts.join(",") })
  }
}
