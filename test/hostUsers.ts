/**
 * Acting as another user of this host, for the tests and chaos rows that check what host users
 * can reach of a sandbox: a command run with another uid and gid (`setpriv`, as root), and a
 * throwaway account made for one test and removed after it. The kernel's checks see only the
 * numbers, so a uid that no account has is as real a user as one that has an entry.
 */
import { Effect } from "effect"
import { spawnSync, type SpawnSyncReturns } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { required } from "./conformance/requirement.ts"

/** Whether this process can act as another user (root, with util-linux's `setpriv`); in CI it must. */
export const mayActAsOtherUsers = (): boolean =>
  required(process.getuid?.() === 0 && spawnSync("setpriv", ["--version"], { stdio: "ignore" }).status === 0, {
    ci: "CI runs as root with setpriv (util-linux): the host-user tests act as other users.",
    skipped: "Skipping the host-user tests: acting as another user needs root and setpriv."
  })

/**
 * Run `command` as uid `uid` and gid `gid`, with no supplementary groups (output as text). Through
 * a shell: setpriv keeps root's capabilities until its own exec, so the path of a program it
 * started directly would be looked up as root; the shell looks it up as the user.
 */
export const asHostUser = (uid: number, gid: number, command: ReadonlyArray<string>): SpawnSyncReturns<string> =>
  spawnSync(
    "setpriv",
    [
      "--reuid",
      String(uid),
      "--regid",
      String(gid),
      "--clear-groups",
      "/bin/sh",
      "-c",
      "exec \"$0\" \"$@\"",
      ...command
    ],
    { encoding: "utf8", timeout: 10_000 }
  )

/** A command's failure as another user was a refusal of the kernel, not something else going wrong. */
export const deniedAccess = (result: SpawnSyncReturns<string>): boolean =>
  result.status !== 0 && result.stderr.includes("Permission denied")

/** The uid and gid of an account of this host. */
const idsOf = (name: string) => ({
  uid: Number(spawnSync("id", ["-u", name], { encoding: "utf8" }).stdout.trim()),
  gid: Number(spawnSync("id", ["-g", name], { encoding: "utf8" }).stdout.trim())
})

/** A new account of this host (no home, no login shell), removed when the scope closes. */
export const throwawayHostUser = Effect.acquireRelease(
  Effect.sync(() => {
    const name = `es-probe-${randomBytes(4).toString("hex")}`
    const made = spawnSync("useradd", ["--no-create-home", "--no-log-init", "--shell", "/usr/sbin/nologin", name], {
      encoding: "utf8"
    })
    if (made.status !== 0) throw new Error(`useradd ${name} failed: ${made.stderr}`)
    return { name, ...idsOf(name) }
  }),
  ({ name }) => Effect.sync(() => spawnSync("userdel", [name], { stdio: "ignore" }))
)

/** A host process: its pid, command line, and every uid and gid it holds (real, effective, saved, fs). */
export interface HostProcess {
  readonly pid: number
  readonly args: string
  readonly uids: ReadonlyArray<number>
  readonly gids: ReadonlyArray<number>
}

const idsIn = (status: string, field: "Uid" | "Gid") =>
  (new RegExp(`^${field}:\\s+(.*)$`, "m").exec(status)?.[1] ?? "").split(/\s+/).map(Number)

/** `/proc/<pid>/status`, or undefined once the process is gone. */
const statusOf = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8")
  } catch {
    return undefined
  }
}

/** The processes of a container, as the host sees them (`docker top`: host pids). */
export const containerProcesses = (container: string): ReadonlyArray<HostProcess> =>
  spawnSync("docker", ["top", container, "-eo", "pid,args"], { encoding: "utf8" }).stdout.split("\n").slice(1)
    .flatMap((line) => {
      const match = /^\s*(\d+)\s+(.*)$/.exec(line)
      if (match === null) return []
      const status = statusOf(Number(match[1]))
      return status === undefined ? [] : [{
        pid: Number(match[1]),
        args: match[2]!,
        uids: idsIn(status, "Uid"),
        gids: idsIn(status, "Gid")
      }]
    })

/** Whether an account or group of this host has the number `id` (`getent`: files and the other NSS sources). */
export const hostHas = (database: "passwd" | "group", id: number): boolean =>
  spawnSync("getent", [database, String(id)], { stdio: "ignore" }).status === 0
