/**
 * Who on this host holds a uid or a gid. Without user namespaces a container's processes and
 * files carry the host's numbers, so a host account with the sandbox's uid (or a user whose
 * subordinate ids cover it, as rootless Docker and Podman use them) could read the sandbox's
 * `/proc/<pid>/environ` and files; the runtimes ask this before they choose a sandbox uid.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

type Database = "passwd" | "group"

/**
 * The entry of `id` in `database`: `getent` first (it also asks LDAP, SSSD and the other NSS
 * sources a host may use), the file itself where `getent` is missing or cannot answer.
 */
const entryOf = (database: Database, id: number): string | undefined => {
  try {
    return execFileSync("getent", [database, String(id)], { encoding: "utf8", timeout: 5_000, stdio: "pipe" })
      .split("\n")[0]
  } catch (error) {
    // getent's exit code 2: no such entry.
    if ((error as { status?: number }).status === 2) return undefined
  }
  return linesOf(`/etc/${database}`).find((line) => line.split(":")[2] === String(id))
}

const linesOf = (file: string): ReadonlyArray<string> => {
  try {
    return readFileSync(file, "utf8").split("\n").filter((line) => line !== "" && !line.startsWith("#"))
  } catch {
    return []
  }
}

/** Users whose subordinate range in `file` (`name:start:count` a line) covers `id`. */
const subordinateHolders = (file: string, id: number): ReadonlyArray<string> =>
  linesOf(file).flatMap((line) => {
    const [name, start, count] = line.split(":")
    const first = Number(start)
    const last = first + Number(count) - 1
    return id >= first && id <= last ? [`${name}'s subordinate ids ${first}-${last} (${file})`] : []
  })

/** Where users' subordinate ids are listed (shadow's files; a test points elsewhere). */
export const SUBORDINATE_FILES = { uids: "/etc/subuid", gids: "/etc/subgid" } as const

/**
 * What on this host holds uid `uid` or gid `gid`, one phrase each ("user cloudsdk (passwd)");
 * empty when nothing does.
 */
export const hostHoldersOf = (
  uid: number,
  gid: number,
  subordinate: { readonly uids: string; readonly gids: string } = SUBORDINATE_FILES
): ReadonlyArray<string> => {
  const user = entryOf("passwd", uid)
  const group = entryOf("group", gid)
  return [
    ...(user === undefined ? [] : [`user ${user.split(":")[0]} (passwd)`]),
    ...(group === undefined ? [] : [`group ${group.split(":")[0]} (group)`]),
    ...subordinateHolders(subordinate.uids, uid),
    ...subordinateHolders(subordinate.gids, gid)
  ]
}
