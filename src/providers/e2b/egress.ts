/**
 * The `network` option on E2B (docs/network.md), through the SDK's create options: `"deny-all"` is
 * `allowInternetAccess: false` (E2B: "the same as denyOut 0.0.0.0/0"); `allowOnly` is
 * `network.denyOut: ["0.0.0.0/0"]` with the rules in `allowOut`, which takes precedence over it
 * (E2B filters host names by the TLS SNI or HTTP Host it sees). Wildcard domains and IPv6 rules
 * are refused: E2B's egress filter takes IPv4 addresses, IPv4 blocks and host names.
 *
 * The `secrets` option's header form is E2B's per-domain transform (`network.rules`: E2B's egress
 * proxy sets the header on HTTP and HTTPS requests to the host, outside the VM; docs/secrets.md).
 * The placeholder form (`env`) and address hosts are refused: E2B swaps nothing and keys rules by
 * domain.
 */
import { Effect, Redacted } from "effect"
import type { ParsedSecret } from "../../network/edgeSecrets.ts"
import { SECRET_SLOT } from "../../network/injection.ts"
import { cidrOf, type EgressPolicy, refuseRules, wildcardOrIpv6 } from "../../network/policy.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"

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

/** The secrets E2B cannot put on requests refused (the driver definition's `edgeSecrets`). */
export const checkE2BSecrets = (secrets: ReadonlyArray<ParsedSecret>) => {
  const at = secrets.findIndex((secret) => secret.env !== undefined || secret.hosts.some((h) => h._tag !== "Host"))
  return at < 0 ? Effect.void : Effect.fail(
    new InvalidOptionsError({
      message: `E2BRuntime options: secrets[${at}]: E2B's egress proxy sets a header per host name ` +
        "(network.rules): it swaps no placeholder (env) and takes no address."
    })
  )
}

/** Each bound host's headers, as E2B's per-domain rules (one rule per host, its secrets' headers merged). */
const secretRules = (secrets: ReadonlyArray<ParsedSecret>) => {
  const headers: Record<string, Record<string, string>> = {}
  for (const secret of secrets) {
    if (secret.header === undefined) continue
    const value = secret.header.template.split(SECRET_SLOT).join(Redacted.value(secret.value))
    for (const host of secret.hosts) {
      if (host._tag === "Host") headers[host.host] = { ...headers[host.host], [secret.header.name]: value }
    }
  }
  return Object.fromEntries(Object.entries(headers).map(([host, set]) => [host, [{ transform: { headers: set } }]]))
}

/** The create options that carry the policy (none without one), and the secrets' rules (an allow list's only). */
export const e2bEgress = (policy: EgressPolicy | undefined, secrets: ReadonlyArray<ParsedSecret> = []) =>
  policy === undefined
    ? {}
    : policy._tag === "DenyAll"
    ? { allowInternetAccess: false }
    : {
      network: {
        denyOut: [ALL_TRAFFIC],
        allowOut: policy.rules.flatMap((rule) =>
          rule._tag === "Cidr" ? [cidrOf(rule)] : rule._tag === "Host" ? [rule.host] : []
        ),
        ...(secrets.length === 0 ? {} : { rules: secretRules(secrets) })
      }
    }
