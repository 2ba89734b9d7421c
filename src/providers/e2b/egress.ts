/**
 * The `network` option on E2B (docs/network.md), through the SDK's create options: `"deny-all"` is
 * `allowInternetAccess: false` (E2B: "the same as denyOut 0.0.0.0/0"); `allowOnly` is
 * `network.denyOut: ["0.0.0.0/0"]` with the rules in `allowOut`, which takes precedence over it
 * (E2B filters host names by the TLS SNI or HTTP Host it sees). Wildcard domains and IPv6 rules
 * are refused: E2B's egress filter takes IPv4 addresses, IPv4 blocks and host names.
 */
import { cidrOf, type EgressPolicy, refuseRules, wildcardOrIpv6 } from "../../network/policy.ts"

/** Everything, as E2B names it. */
const ALL_TRAFFIC = "0.0.0.0/0"

/** The rules E2B cannot express refused (the driver definition's `network`). */
export const checkE2BEgress = (policy: EgressPolicy) =>
  refuseRules(
    "E2BRuntime",
    policy,
    wildcardOrIpv6,
    "E2B's allowOut takes host names, IPv4 addresses and IPv4 CIDR blocks"
  )

/** The create options that carry the policy (none without one). */
export const e2bEgress = (policy: EgressPolicy | undefined) =>
  policy === undefined
    ? {}
    : policy._tag === "DenyAll"
    ? { allowInternetAccess: false }
    : {
      network: {
        denyOut: [ALL_TRAFFIC],
        allowOut: policy.rules.flatMap((rule) =>
          rule._tag === "Cidr" ? [cidrOf(rule)] : rule._tag === "Host" ? [rule.host] : []
        )
      }
    }
