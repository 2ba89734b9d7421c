/**
 * A host of its own for each sandbox's IDE in proxy mode: `<runtime_id>-<mac>.<domain>` on the
 * API's port, which the API routes by its `Host` header (vscodeProxy.ts). Everything an IDE's
 * origin serves is its sandbox's to write, so IDEs that shared the API's origin could script each
 * other (a service worker registered by one sees every other IDE's URL and token); an origin per
 * sandbox leaves them nothing in common but the browser.
 *
 * `<mac>` (128 bits of an HMAC of the runtime id under the sandbox's session key) makes the host a
 * name only the API, and whoever it sent there with the IDE's token, can form: the token cookie is
 * host-only, and a browser sends a host's cookies to every port of it, so a name anyone could form
 * would let a server on another port of that address (a sandbox's published app port, with
 * `*.localhost`) have the browser bring it the cookie. A host whose mac does not match is answered
 * as an unknown runtime.
 *
 * `domain`: `--vscode-domain`, whose every name must reach this server (a wildcard DNS record, or
 * `<ip>.sslip.io`), or `localhost` when clients reach the API on loopback: Chromium and Firefox
 * resolve every `*.localhost` name to loopback without DNS.
 */
import { Redacted } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { isSharedLoopbackHost } from "../server/vscode/ideOrigin.ts"
import { RUNTIME_ID_PATTERN } from "./schemas.ts"

const macOf = (runtimeId: string, sessionApiKey: Redacted.Redacted<string>) =>
  createHmac("sha256", Redacted.value(sessionApiKey)).update(`effect-sandbox vscode host\n${runtimeId}`).digest("hex")
    .slice(0, 32)

/** The host label of `runtimeId`'s IDE (60 characters: a DNS label holds 63). */
export const ideHostLabel = (runtimeId: string, sessionApiKey: Redacted.Redacted<string>): string =>
  `${runtimeId}-${macOf(runtimeId, sessionApiKey)}`

const LABEL = new RegExp(`^(${RUNTIME_ID_PATTERN.source.slice(1, -1)})-([0-9a-f]{32})$`)

/** An IDE host a request was sent to: the runtime it names, and the mac to check. */
export interface IdeHost {
  readonly runtimeId: string
  readonly mac: string
}

/** The IDE host named by a `Host` header under `domain`, or undefined (a request for the API itself). */
export const ideHostOf = (host: string | undefined, domain: string): IdeHost | undefined => {
  if (host === undefined || !URL.canParse(`http://${host}`)) return undefined
  const hostname = new URL(`http://${host}`).hostname
  const suffix = `.${domain.toLowerCase()}`
  if (!hostname.endsWith(suffix)) return undefined
  const match = LABEL.exec(hostname.slice(0, -suffix.length))
  return match === null ? undefined : { runtimeId: match[1]!, mac: match[2]! }
}

/** Whether `host`'s mac is the one of its runtime's session key (constant time). */
export const hostMatches = (host: IdeHost, sessionApiKey: Redacted.Redacted<string>): boolean =>
  timingSafeEqual(Buffer.from(host.mac), Buffer.from(macOf(host.runtimeId, sessionApiKey)))

/** The domain IDE hosts go under: the one given, else `localhost` when the API's public host is loopback. */
export const ideDomain = (given: string | undefined, publicHostname: string): string | undefined =>
  given ?? (isSharedLoopbackHost(publicHostname) ? "localhost" : undefined)
