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

/**
 * Addresses off the public internet: this host and its loopback, the private and shared (CGNAT)
 * ranges where the host's bridge, other sandboxes and a cloud's pods live, link-local (the cloud
 * metadata address 169.254.169.254), multicast and reserved blocks, and their IPv6 kin. A name a
 * Host or Domain rule allows does not reach one of these, only a Cidr rule that covers it does:
 * otherwise whoever controls an allowed name's DNS (or a wildcard's subdomain) could point it at
 * a neighbour, the host or the metadata service.
 */
const NOT_PUBLIC = new BlockList()
for (
  const [address, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 3]
  ] as const
) NOT_PUBLIC.addSubnet(address, prefix, "ipv4")
for (
  const [address, prefix] of [
    ["::", 127],
    ["64:ff9b::", 96],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8]
  ] as const
) NOT_PUBLIC.addSubnet(address, prefix, "ipv6")

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as the IPv4 address it is; others as they are. */
const unmapped = (address: string): { readonly address: string; readonly family: "ipv4" | "ipv6" } | undefined => {
  const family = isIP(address)
  if (family === 0) return undefined
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  return mapped !== undefined
    ? { address: mapped, family: "ipv4" }
    : { address, family: family === 4 ? "ipv4" : "ipv6" }
}

/** Whether an address is on the public internet (see NOT_PUBLIC). */
export const isPublicAddress = (address: string): boolean => {
  const found = unmapped(address)
  return found !== undefined && !NOT_PUBLIC.check(found.address, found.family)
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
      const found = unmapped(address)
      return found !== undefined && blocks.check(found.address, found.family)
    }
  }
}
