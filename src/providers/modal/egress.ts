/**
 * The `network` option on Modal (docs/network.md), through the SDK's create parameters:
 * `"deny-all"` is an empty `outboundCidrAllowlist` (the SDK's own advice for blocking public egress
 * while the sandbox keeps its networking, which its tunnels, the server's way in, need; `blockNetwork`
 * turns everything off); `allowOnly` puts blocks and addresses in `outboundCidrAllowlist` and host
 * names and `*.domains` in `outboundDomainAllowlist`. IPv6 rules are refused: this runtime maps
 * IPv4 blocks only.
 */
import { cidrBlocks, type EgressPolicy, refuseRules } from "../../network/policy.ts"

/** The rules this runtime does not map to Modal refused (the driver definition's `network`). */
export const checkModalEgress = (policy: EgressPolicy) =>
  refuseRules(
    "ModalRuntime",
    policy,
    (rule) => rule._tag === "Cidr" && rule.family === "ipv6",
    "Modal's outboundCidrAllowlist is given IPv4 blocks only by this runtime"
  )

/** The create parameters that carry the policy (none without one). */
export const modalEgress = (policy: EgressPolicy | undefined) =>
  policy === undefined ? {} : {
    outboundCidrAllowlist: cidrBlocks(policy),
    ...(policy._tag === "AllowOnly" && policy.rules.some((rule) => rule._tag !== "Cidr")
      ? {
        outboundDomainAllowlist: policy.rules.flatMap((rule) =>
          rule._tag === "Host" ? [rule.host] : rule._tag === "Domain" ? [`*.${rule.suffix}`] : []
        )
      }
      : {})
  }
