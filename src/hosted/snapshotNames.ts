/**
 * Owner tags carried in a snapshot's name, for providers whose snapshots have no labels or
 * metadata (Daytona's, E2B's): the hosted runtime lists, removes and reaps snapshots by their tags
 * (snapshots.ts, reaper.ts), so a name is all such a provider gives back to find them by.
 */
import { randomBytes } from "node:crypto"
import { TAGS } from "./ownerTags.ts"

const PREFIX = "effect-sandbox-snapshot-"

/** The tags a name carries, in this order; `managed` and `snapshot` are the prefix itself. */
const CARRIED = [TAGS.session, TAGS.ownerHost, TAGS.ownerPid, TAGS.keepAlive] as const

/**
 * A snapshot's name carrying its tags and when it was taken: the prefix, 8 random hex digits (a
 * name is unique on the provider, and one session may take many), then the carried values' JSON
 * in hex: lowercase letters and digits only, whatever the session id or host name holds (a
 * provider checks a name as a display string, an image reference or a template alias).
 */
export const snapshotName = (tags: Readonly<Record<string, string>>, takenAt: Date): string =>
  `${PREFIX}${randomBytes(4).toString("hex")}-${
    Buffer.from(JSON.stringify([...CARRIED.map((tag) => tags[tag] ?? ""), takenAt.getTime()])).toString("hex")
  }`

/** The tags and time a name carries; undefined for a snapshot named otherwise (not ours). */
export const parseSnapshotName = (
  name: string
): { readonly tags: Record<string, string>; readonly takenAt: Date } | undefined => {
  const match = /^effect-sandbox-snapshot-[0-9a-f]{8}-((?:[0-9a-f]{2})+)$/.exec(name)
  if (match === null) return undefined
  try {
    const values: unknown = JSON.parse(Buffer.from(match[1]!, "hex").toString("utf8"))
    if (!Array.isArray(values) || values.length !== CARRIED.length + 1) return undefined
    const [takenAt, ...carried] = [values.at(-1), ...values.slice(0, -1)]
    if (typeof takenAt !== "number" || !carried.every((value) => typeof value === "string")) return undefined
    return {
      tags: {
        [TAGS.managed]: "true",
        [TAGS.snapshot]: "true",
        ...Object.fromEntries(CARRIED.map((tag, i) => [tag, carried[i] as string]))
      },
      takenAt: new Date(takenAt)
    }
  } catch {
    return undefined
  }
}

/** Whether every one of `wanted` is among `tags` (a `find`'s filter). */
export const hasTags = (tags: Readonly<Record<string, string>>, wanted: Readonly<Record<string, string>>) =>
  Object.entries(wanted).every(([k, v]) => tags[k] === v)
