/**
 * Whether an allow list lets a connection through: by the name asked for (a Host or Domain rule) or
 * by the address actually connected to (a Cidr rule). Plain Node, no Effect: the egress proxy
 * (egressProxy.ts) bundles it into its own small payload file.
 */
import { BlockList, isIP } from "node:net"
import type { EgressRule } from "./policy.ts"

/** The rules compiled once: a name check and an address check. */
export interface Allows {
  /** The name (lower case, no trailing dot) matches a Host or Domain rule. */
  readonly name: (host: string) => boolean
  /** The address falls in a Cidr rule. */
  readonly address: (address: string) => boolean
}

export const compileRules = (rules: ReadonlyArray<EgressRule>): Allows => {
  const blocks = new BlockList()
  const hosts = new Set<string>()
  const suffixes: Array<string> = []
  for (const rule of rules) {
    if (rule._tag === "Cidr") blocks.addSubnet(rule.address, rule.prefix, rule.family)
    else if (rule._tag === "Host") hosts.add(rule.host)
    else suffixes.push(`.${rule.suffix}`)
  }
  return {
    name: (host) => hosts.has(host) || suffixes.some((suffix) => host.endsWith(suffix)),
    address: (address) => {
      const family = isIP(address)
      if (family === 0) return false
      // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is checked as the IPv4 address it is.
      const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
      return mapped !== undefined
        ? blocks.check(mapped, "ipv4")
        : blocks.check(address, family === 4 ? "ipv4" : "ipv6")
    }
  }
}
