/**
 * Secrets at the edge, as the egress proxy applies them (egressProxy.ts): which bound secrets a
 * request's destination gets, and the request's headers and path with them put in. Plain Node, no
 * Effect: bundled into payload/egress-proxy.mjs with the proxy. The destination is the host of the
 * request line's absolute URL, the one the proxy connects to, never the `Host` header a client
 * writes (which the proxy overwrites): a request to another host cannot borrow a bound host's name.
 */
import type { OutgoingHttpHeaders } from "node:http"
import { isIP } from "node:net"
import type { EgressRule } from "./policy.ts"

/** The place of the real value in a header's template. */
export const SECRET_SLOT = "{secret}"

/** A secret as the gateway holds it: the real value, the sandbox's placeholder, where it goes. */
export interface BoundSecret {
  /** Where it may go: Host (that name), Domain (its subdomains) or a single address (Cidr /32 or /128). */
  readonly hosts: ReadonlyArray<EgressRule>
  /** What the sandbox holds instead of the value (in its environment), swapped for it on the way out. */
  readonly placeholder: string
  readonly value: string
  /** A header set on every request to its hosts: `template` with SECRET_SLOT replaced by the value. */
  readonly header?: { readonly name: string; readonly template: string }
}

/** A host as the proxy compares it: lower case, no brackets, no trailing dot. */
export const normalHost = (host: string): string => host.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase()

/** Whether a (normalized) destination host is one of a secret's hosts. */
const boundTo = (secret: BoundSecret, host: string): boolean =>
  secret.hosts.some((rule) =>
    rule._tag === "Host"
      ? rule.host === host
      : rule._tag === "Domain"
      ? host.endsWith(`.${rule.suffix}`)
      : isIP(host) !== 0 && rule.address === host
  )

/** The secrets bound to the destination `host`. */
export const secretsFor = (secrets: ReadonlyArray<BoundSecret>, host: string): ReadonlyArray<BoundSecret> =>
  secrets.filter((secret) => boundTo(secret, normalHost(host)))

/** Every placeholder of `bound` in `text` replaced by its value. */
const swap = (bound: ReadonlyArray<BoundSecret>, text: string): string =>
  bound.reduce((out, secret) => out.split(secret.placeholder).join(secret.value), text)

/**
 * A request's headers and path with the bound secrets put in: placeholders swapped in every header
 * value and in the path and query, then each secret's header set (replacing the client's own).
 * Bodies are left as sent.
 */
export const inject = (
  bound: ReadonlyArray<BoundSecret>,
  headers: OutgoingHttpHeaders,
  path: string
): { readonly headers: OutgoingHttpHeaders; readonly path: string } => {
  if (bound.length === 0) return { headers, path }
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out[name] = Array.isArray(value) ? value.map((one) => swap(bound, one)) : swap(bound, String(value))
  }
  for (const secret of bound) {
    if (secret.header !== undefined) {
      out[secret.header.name.toLowerCase()] = secret.header.template.split(SECRET_SLOT).join(secret.value)
    }
  }
  return { headers: out, path: swap(bound, path) }
}
