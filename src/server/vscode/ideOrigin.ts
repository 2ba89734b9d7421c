/**
 * Where an IDE lives in the browser, and which pages may talk to it. Everything served from an
 * IDE's origin is the sandbox's to write (an agent can install a web extension, replace the
 * workbench, or serve its own pages through code-server's port proxy), so two sandboxes' IDEs must
 * never share an origin, and the token cookie that opens one must never reach a server that is not
 * that IDE. Browsers give no port of its own to a cookie (a cookie of `127.0.0.1:A` is sent to
 * `127.0.0.1:B` as well), and SameSite counts every port of a host as one site, so:
 *
 * - an IDE reached on a host every local server shares (`127.0.0.1`, `localhost`) is moved to a
 *   host of its own, `ide-<h>.localhost` on the same port (Chromium and Firefox resolve every
 *   `*.localhost` name to loopback themselves, without DNS), `<h>` derived from the token: a host
 *   only whoever holds the token can name, so no other server on the machine can have the browser
 *   send it that host's cookies (a host-only cookie goes to every port of its host);
 * - the cookie's name is derived from the token too (two IDEs behind one host keep two cookies);
 * - a request from a page of another origin is refused (`fromAnotherOrigin`): WebSockets are not
 *   subject to CORS, and a page of the same site (another port, another sandbox's host under the
 *   same domain) gets the cookie sent along.
 */
import { createHash } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"

/** A hex digest of `token` for one `purpose`, `length` digits (none of the token can be read back). */
const derived = (purpose: string, token: string, length: number) =>
  createHash("sha256").update(`effect-sandbox vscode ${purpose}\n${token}`).digest("hex").slice(0, length)

/** The IDE's host label on this machine (128 bits of the token's digest): `<label>.localhost`. */
export const ideHostLabel = (token: string): string => `ide-${derived("host", token, 32)}`

/** A host name of an IDE moved off a shared host (`ideBase`), whichever token it was made for. */
const IDE_HOST = /^ide-[0-9a-f]{32}\.localhost$/

/** The token cookie's name for `token` (OpenVSCode Server's is `vscode-tkn` for every IDE). */
export const tokenCookieName = (token: string): string => `vscode-tkn-${derived("cookie", token, 12)}`

/** Host names (as `URL.hostname` spells them) that every server on this machine answers to. */
export const isSharedLoopbackHost = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)

/**
 * `base` (where the IDE's port is reached) on a host of the IDE's own: an `http://` origin on a
 * shared loopback host, or on an earlier token's `ide-` host, becomes `ide-<label>.localhost` on
 * the same port; any other host (a sandbox's own address, a provider's per-sandbox host), and a
 * base with a path (a front end's route), is left as it is.
 */
export const ideBase = (base: string, token: string): string => {
  const url = new URL(base)
  const moved = isSharedLoopbackHost(url.hostname) || IDE_HOST.test(url.hostname)
  if (!moved || url.protocol !== "http:" || url.pathname !== "/" || url.search !== "") return base
  url.hostname = `${ideHostLabel(token)}.localhost`
  return url.origin
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** `Origin`'s host and port, or undefined for `null` or a malformed one. */
const originHost = (origin: string) => {
  try {
    return new URL(origin).host
  } catch {
    return undefined
  }
}

/**
 * Whether a browser sent this request from a page of another origin: an `Origin` that is not the
 * host asked for (`Host`, or `X-Forwarded-Host` where a front end rewrote `Host`; a page cannot
 * set either on a WebSocket, and a cross-origin fetch that tried would be refused at its
 * preflight), or `Sec-Fetch-Site` other than `same-origin`/`none` on anything but a navigation.
 * Navigations pass: a link or the address bar is how the IDE is opened (its first URL carries the
 * token), and a page cannot read what another origin's navigation loads. A request without these
 * headers is not a browser's page (curl, a client library): the token alone decides.
 */
export const fromAnotherOrigin = (headers: IncomingHttpHeaders): boolean => {
  const origin = header(headers, "origin")
  if (origin !== undefined) {
    const from = originHost(origin)?.toLowerCase()
    const own = [header(headers, "host"), header(headers, "x-forwarded-host")].map((h) => h?.toLowerCase())
    if (from === undefined || !own.includes(from)) return true
  }
  const site = header(headers, "sec-fetch-site")
  return site !== undefined && site !== "same-origin" && site !== "none" &&
    header(headers, "sec-fetch-mode") !== "navigate"
}

/** Headers a service worker's script could use to claim more of its origin than its directory. */
export const SERVICE_WORKER_HEADERS: ReadonlySet<string> = new Set(["service-worker-allowed"])
