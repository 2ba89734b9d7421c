/**
 * The published name (`name:tag`) a Modal snapshot image carries our owner tags in. Modal's
 * snapshot images have no tags and nothing lists images, so each snapshot is published under a
 * name (snapshot.ts) found again with the control plane's prefix search over `name:tag`. The SDK
 * checks the name and the tag as Modal object names (at most 64 characters of `[A-Za-z0-9._-]`, the
 * name not starting `im-`), which the tag-carrying names of Daytona and E2B (hosted/snapshotNames.ts,
 * some 200 characters) do not fit. So:
 *
 * - the name is `es-snap-<owner host's digest>-<owner pid>-<8 random hex digits>`: the host only as
 *   16 hex digits of its SHA-256 (the reaper only ever asks "this host?", and a host name may be 253
 *   characters), so one host's snapshots share a prefix the listing asks for; the random part makes
 *   every snapshot's name its own;
 * - the tag is `kept-` or `owned-`, then the session: as it is (`s-<id>`) where it fits, else its
 *   UTF-8 in base64url (`b-...`), else (a session id of more than 42 bytes that is not a name) 56 hex
 *   digits of its SHA-256 (`h-...`), which a listing gives back as `sha256:<hex>`.
 */
import { createHash, randomBytes } from "node:crypto"
import { TAGS } from "../../hosted/ownerTags.ts"

/** What every one of our snapshot names begins with. */
export const SNAPSHOT_PREFIX = "es-snap-"

/** The longest session part after its form's letter and dash (the tag's 64 less `owned-` and `s-`). */
const SESSION_ROOM = 56

const digest = (text: string, length: number) => createHash("sha256").update(text).digest("hex").slice(0, length)

/** The prefix of the snapshots whose owner ran on `host`. */
export const hostPrefix = (host: string) => `${SNAPSHOT_PREFIX}${digest(host, 16)}-`

/** The session as the tag carries it. */
const sessionPart = (sessionId: string): string => {
  if (new RegExp(`^[A-Za-z0-9._-]{1,${SESSION_ROOM}}$`).test(sessionId)) return `s-${sessionId}`
  const encoded = Buffer.from(sessionId, "utf8").toString("base64url")
  return encoded.length <= SESSION_ROOM ? `b-${encoded}` : `h-${digest(sessionId, SESSION_ROOM)}`
}

/** The session a tag's part gives back. */
const sessionOf = (form: string, value: string): string =>
  form === "s" ? value : form === "b" ? Buffer.from(value, "base64url").toString("utf8") : `sha256:${value}`

/** The `name:tag` a snapshot taken with `tags` (hosted/ownerTags.ts `snapshotTags`) is published under. */
export const snapshotRef = (tags: Readonly<Record<string, string>>): string =>
  `${hostPrefix(tags[TAGS.ownerHost] ?? "")}${tags[TAGS.ownerPid] ?? "0"}-${randomBytes(4).toString("hex")}:${
    tags[TAGS.keepAlive] === "true" ? "kept" : "owned"
  }-${sessionPart(tags[TAGS.session] ?? "")}`

const REF = /^es-snap-([0-9a-f]{16})-(\d{1,10})-[0-9a-f]{8}:(kept|owned)-([sbh])-([A-Za-z0-9._-]+)$/

/**
 * The owner tags a published name carries (an environment's `env/` prefix ignored), undefined for
 * a name that is not ours. The host is known only by its digest: it is `host` where the digest is
 * `host`'s (the host a caller asks about), else `sha256:<digest>`.
 */
export const parseSnapshotRef = (ref: string, host: string): Record<string, string> | undefined => {
  const match = REF.exec(ref.slice(ref.lastIndexOf("/") + 1))
  if (match === null) return undefined
  const [, hostDigest, pid, keep, form, session] = match as unknown as [string, string, string, string, string, string]
  return {
    [TAGS.managed]: "true",
    [TAGS.snapshot]: "true",
    [TAGS.session]: sessionOf(form, session),
    [TAGS.ownerHost]: hostDigest === digest(host, 16) ? host : `sha256:${hostDigest}`,
    [TAGS.ownerPid]: pid,
    [TAGS.keepAlive]: String(keep === "kept")
  }
}
