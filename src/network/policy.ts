/**
 * The `network` option (services/RuntimeOptions.ts): what a sandbox may reach beyond itself. Absent,
 * a runtime does what it always did (Cli and Local: whatever the host reaches; Docker: the internet
 * through its bridge; a cloud: the provider's default). `"deny-all"` reaches nothing; `{ allowOnly }`
 * reaches only the listed destinations. Parsed here once into rules each runtime maps to its own
 * controls, refusing (InvalidOptionsError at start, naming the runtime and the rule) what it cannot
 * express rather than let it through: docs/network.md has the table.
 */
import { Effect } from "effect"
import { isIP } from "node:net"
import { InvalidOptionsError } from "../schema/errors.ts"

/**
 * The option as callers write it. A rule of `allowOnly` is a host name (`api.github.com`: that name
 * only), a domain (`*.github.com`: its subdomains, not the name itself), an address (`10.0.0.7`,
 * `fd00::1`) or a CIDR block (`10.0.0.0/8`, `fd00::/8`). An empty list is the same as `"deny-all"`.
 */
export type NetworkPolicy = "deny-all" | { readonly allowOnly: ReadonlyArray<string> }

/** One parsed rule; `text` is what the caller wrote, for messages. */
export type EgressRule =
  | { readonly _tag: "Host"; readonly text: string; readonly host: string }
  | { readonly _tag: "Domain"; readonly text: string; readonly suffix: string }
  | {
    readonly _tag: "Cidr"
    readonly text: string
    readonly address: string
    readonly prefix: number
    readonly family: "ipv4" | "ipv6"
  }

/** The policy a runtime enforces: nothing gets out, or only what one of the rules allows. */
export type EgressPolicy =
  | { readonly _tag: "DenyAll" }
  | { readonly _tag: "AllowOnly"; readonly rules: ReadonlyArray<EgressRule> }

/** A DNS name as resolvers take it: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

const invalid = (runtime: string, message: string) =>
  new InvalidOptionsError({ message: `${runtime} options: network: ${message}` })

/** One rule parsed, or undefined when it is none of the four forms (edgeSecrets.ts parses its hosts with it too). */
export const parseRule = (text: string): EgressRule | undefined => {
  const lower = text.trim().toLowerCase()
  const slash = lower.indexOf("/")
  if (slash >= 0) {
    const address = lower.slice(0, slash)
    const digits = lower.slice(slash + 1)
    const family = isIP(address)
    const prefix = Number(digits)
    const max = family === 4 ? 32 : 128
    return family !== 0 && /^\d{1,3}$/.test(digits) && prefix <= max
      ? { _tag: "Cidr", text, address, prefix, family: family === 4 ? "ipv4" : "ipv6" }
      : undefined
  }
  const family = isIP(lower)
  if (family !== 0) {
    return {
      _tag: "Cidr",
      text,
      address: lower,
      prefix: family === 4 ? 32 : 128,
      family: family === 4 ? "ipv4" : "ipv6"
    }
  }
  if (lower.startsWith("*.")) {
    const suffix = lower.slice(2)
    return HOST_NAME.test(suffix) && suffix.includes(".") ? { _tag: "Domain", text, suffix } : undefined
  }
  return HOST_NAME.test(lower) ? { _tag: "Host", text, host: lower } : undefined
}

/**
 * The option checked and parsed (undefined: absent, today's behaviour), each bad rule an
 * InvalidOptionsError naming it, before anything is made.
 */
export const parseNetworkPolicy = (
  runtime: string,
  network: NetworkPolicy | undefined
): Effect.Effect<EgressPolicy | undefined, InvalidOptionsError> => {
  if (network === undefined) return Effect.succeed(undefined)
  if (network === "deny-all") return Effect.succeed({ _tag: "DenyAll" })
  if (typeof network !== "object" || network === null || !Array.isArray(network.allowOnly)) {
    return Effect.fail(invalid(runtime, `expected "deny-all" or { allowOnly: [...] }, got ${JSON.stringify(network)}.`))
  }
  const rules: Array<EgressRule> = []
  for (const text of network.allowOnly) {
    const rule = typeof text === "string" ? parseRule(text) : undefined
    if (rule === undefined) {
      return Effect.fail(
        invalid(
          runtime,
          `${JSON.stringify(text)} is not a host name, *.domain, IP address or CIDR block.`
        )
      )
    }
    rules.push(rule)
  }
  return Effect.succeed(rules.length === 0 ? { _tag: "DenyAll" } : { _tag: "AllowOnly", rules })
}

/**
 * The first rule a runtime cannot express refused: an InvalidOptionsError naming the runtime, the
 * rule and why (`cannot` says which rules it cannot, `why` the provider's limit).
 */
export const refuseRules = (
  runtime: string,
  policy: EgressPolicy | undefined,
  cannot: (rule: EgressRule) => boolean,
  why: string
): Effect.Effect<void, InvalidOptionsError> => {
  const refused = policy?._tag === "AllowOnly" ? policy.rules.find(cannot) : undefined
  return refused === undefined
    ? Effect.void
    : Effect.fail(invalid(runtime, `${runtime} cannot enforce the rule ${JSON.stringify(refused.text)}: ${why}.`))
}

/** A policy a runtime cannot enforce at all, refused whole (Cli and Local: no boundary of their own). */
export const refusePolicy = (
  runtime: string,
  network: NetworkPolicy | undefined,
  why: string
): Effect.Effect<void, InvalidOptionsError> =>
  network === undefined
    ? Effect.void
    : Effect.fail(invalid(runtime, `${runtime} cannot enforce ${JSON.stringify(network)}: ${why}.`))

/**
 * Why Cli and Local refuse a policy: their commands run as processes of this host, in its network
 * namespace, and nothing they do not own (a firewall, a namespace) stands between them and it.
 */
export const LOCAL_EGRESS_REFUSAL = "its commands run on this host's own network, where nothing of the " +
  "runtime's stands between them and any destination (use DockerRuntime, or a cloud runtime, for an egress policy)"

/** A CIDR rule as `address/prefix`. */
export const cidrOf = (rule: Extract<EgressRule, { _tag: "Cidr" }>): string => `${rule.address}/${rule.prefix}`

/** The policy's CIDR rules as `address/prefix`, in order (none for deny-all). */
export const cidrBlocks = (policy: EgressPolicy): Array<string> =>
  policy._tag === "AllowOnly" ? policy.rules.flatMap((rule) => rule._tag === "Cidr" ? [cidrOf(rule)] : []) : []

/** A wildcard domain or an IPv6 block: what the providers that filter by host name and IPv4 do not take. */
export const wildcardOrIpv6 = (rule: EgressRule): boolean =>
  rule._tag === "Domain" || (rule._tag === "Cidr" && rule.family === "ipv6")
