/**
 * The request target, parsed once, for every decision the server makes about a request.
 *
 * The session-key check and the router must agree on which endpoint a request is for. The
 * router (Effect's FindMyWay) does not match the raw target: it cuts the path at the first
 * `?`, `;` or `#`, percent-decodes it, merges `//`, drops one trailing `/`, lowercases it and
 * strips an `http(s)://host` prefix; WHATWG `URL` (what the key check used) normalises
 * differently again (resolves `..`, reads `\` as `/`, keeps `;`). `/execute_action;/../alive`
 * was `/alive` to one and `/execute_action` to the other, which let any command run without
 * the key.
 *
 * So only targets on which every one of those normalisations is the identity get through:
 * origin-form, `/`-separated non-empty segments of `[a-z0-9._~-]` that are not `.` or `..`,
 * no trailing `/`, then optionally `?` and a query of visible ASCII without `#`. Anything
 * else is refused with 400 before routing, so the path the key check reads is the very
 * string the router dispatches on. Legitimate clients (ours, OpenHands', MCP SDKs) only
 * send such targets.
 */

/** A target the router and the key check read the same way. */
export interface RequestTarget {
  /** The path, exactly as sent and as the router matches it. */
  readonly path: string
  /** What follows `?` (without it), or "". */
  readonly query: string
}

export type ParsedTarget =
  | { readonly _tag: "Ok"; readonly target: RequestTarget }
  | { readonly _tag: "Refused"; readonly reason: string }

const SEGMENT = /^[a-z0-9._~-]+$/
/** Visible ASCII but `#` (a fragment is never sent; the router would cut there, URL would not). */
const QUERY = /^[\x21\x22\x24-\x7e]*$/

const refused = (reason: string): ParsedTarget => ({
  _tag: "Refused",
  reason: `Ambiguous request path: ${reason}. Send the path in its plain form, e.g. /execute_action.`
})

const describe = (char: string) => JSON.stringify(char)

/** Why `segment` is not plain, or undefined when it is. */
const segmentProblem = (segment: string): string | undefined => {
  if (segment === "") return "empty segments (`//` or a trailing `/`) are not allowed"
  if (segment === "." || segment === "..") return "`.` and `..` segments are not allowed"
  if (SEGMENT.test(segment)) return undefined
  const bad = [...segment].find((char) => !SEGMENT.test(char))!
  if (bad === "%") return "percent-encoding is not allowed in the path"
  if (/[A-Z]/.test(bad)) return "upper-case letters are not allowed in the path (routes match case-insensitively)"
  return `the character ${describe(bad)} is not allowed in the path`
}

/** Parse a raw request target (Node's `IncomingMessage.url`, as it came off the wire). */
export const parseRequestTarget = (raw: string): ParsedTarget => {
  if (!raw.startsWith("/")) return refused("only origin-form targets (`/path?query`) are accepted")
  const mark = raw.indexOf("?")
  const path = mark < 0 ? raw : raw.slice(0, mark)
  const query = mark < 0 ? "" : raw.slice(mark + 1)
  if (path !== "/") {
    for (const segment of path.slice(1).split("/")) {
      const problem = segmentProblem(segment)
      if (problem !== undefined) return refused(problem)
    }
  }
  if (!QUERY.test(query)) {
    const bad = [...query].find((char) => !QUERY.test(char))!
    return refused(`the character ${describe(bad)} is not allowed in the query`)
  }
  return { _tag: "Ok", target: { path, query } }
}
