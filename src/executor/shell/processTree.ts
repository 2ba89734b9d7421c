/**
 * Finding and killing everything a shell started from the process table, where
 * no cgroup holds the shell (cgroup.ts) or after it: a process belongs to the
 * shell when it is in the shell's session (node-pty makes bash a session
 * leader), descends from the shell (parent links, which survive `setsid` and
 * `env -i`), or carries the shell's marker variable in its environment (which
 * survives `setsid` and reparenting). What none of these catch: a process that
 * both cleaned its environment and was reparented away (a double-forked daemon
 * with `env -i`); only a cgroup holds that one.
 * Linux only (/proc); elsewhere only the process group is signalled.
 */
import { readdirSync, readFileSync } from "node:fs"
import { destroyRuntimeCgroups } from "./cgroup.ts"

/** Environment variable set in every shell; its value identifies the owning session. */
export const SESSION_MARKER_VARIABLE = "EFFECT_SANDBOX_SESSION"

const statFields = (pid: number): Array<string> | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name: state, ppid, pgrp, session, tty_nr, tpgid, ...
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return null
  }
}

/** The terminal's foreground process group of `shellPid` (the running job), or null. */
export const foregroundProcessGroup = (shellPid: number): number | null => {
  const tpgid = Number(statFields(shellPid)?.[5])
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null
}

/** SIGINT's bit in `/proc/<pid>/status`' signal masks. */
const SIGINT_BIT = 1n << 1n

/** Whether `pid` handles SIGINT itself (`SigCgt`); false when it is gone. */
const catchesInterrupt = (pid: number): boolean => {
  try {
    const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1]
    return caught !== undefined && (BigInt(`0x${caught}`) & SIGINT_BIT) !== 0n
  } catch {
    return false
  }
}

const commandLineOf = (pid: number): string | null => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1")
  } catch {
    return null
  }
}

/** Whether a process of group `pgid` is alive (not a zombie). */
const groupAlive = (pgid: number): boolean => {
  const leader = statFields(pgid)
  if (leader !== null && leader[0] !== "Z" && Number(leader[2]) === pgid) return true
  return allPids().some((pid) => {
    const fields = statFields(pid)
    return fields !== null && fields[0] !== "Z" && Number(fields[2]) === pgid
  })
}

/**
 * What the terminal's foreground job `pgid` of the shell `shellPid` would do with a C-c now:
 * - `gone`: it has no living process (it ended; bash has not taken the terminal back yet);
 * - `forking`: its leader is still bash's copy of itself with bash's own SIGINT handler, between
 *   the fork that gave it the terminal and the reset of its signals before the exec: the handler
 *   takes the key and the exec forgets it (measured: a key sent the moment a `sleep 30` takes the
 *   terminal is lost 6 times in 40). A subshell running shell code (`while :; do :; done | cat`)
 *   stays in this state, and its handler does act on the key;
 * - `running`: anything else, which the key reaches as it would from a terminal.
 */
export const jobState = (pgid: number, shellPid: number): "gone" | "forking" | "running" => {
  if (!groupAlive(pgid)) return "gone"
  // The reads are not atomic, but each can only show the window over: a leader that no longer
  // catches the key has reset its signals, and one whose command line changed has exec'd.
  if (!catchesInterrupt(pgid)) return "running"
  const leader = commandLineOf(pgid)
  return leader !== null && leader === commandLineOf(shellPid) ? "forking" : "running"
}

/** The process's marker value, if it has one. */
const markerOf = (pid: number): string | null => {
  try {
    const prefix = `${SESSION_MARKER_VARIABLE}=`
    const entry = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").find((e) => e.startsWith(prefix))
    return entry === undefined ? null : entry.slice(prefix.length)
  } catch {
    return null
  }
}

const allPids = (): Array<number> => {
  try {
    return readdirSync("/proc").map(Number).filter((pid) => Number.isInteger(pid) && pid !== process.pid)
  } catch {
    return []
  }
}

/**
 * PIDs that belong to the shell `sessionId` / `marker` (in its session, below it,
 * or marked), excluding this process. Read before anything is killed: once the
 * shell dies its orphans are reparented and the parent links are lost.
 */
export const sessionProcesses = (sessionId: number, marker: string): Array<number> => {
  const parents = new Map<number, number>()
  const members = new Set<number>()
  for (const pid of allPids()) {
    const fields = statFields(pid)
    if (fields === null) continue
    parents.set(pid, Number(fields[1]))
    if (Number(fields[3]) === sessionId || markerOf(pid) === marker) members.add(pid)
  }
  const below = (pid: number): boolean => {
    for (let p = parents.get(pid), hops = 0; p !== undefined && p > 1 && hops < 4096; p = parents.get(p), hops++) {
      if (p === sessionId) return true
    }
    return false
  }
  for (const pid of parents.keys()) if (below(pid)) members.add(pid)
  return [...members]
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig)
  } catch {
    // already gone
  }
}

/** SIGKILL the shell's whole session, its descendants and every process carrying its marker. */
export const killSession = (sessionId: number, marker: string): void => {
  const members = sessionProcesses(sessionId, marker)
  signal(-sessionId, "SIGKILL")
  for (const pid of members) signal(pid, "SIGKILL")
}

/**
 * SIGKILL everything in the runtime's cgroups and every process whose marker
 * starts with `runtimeId/`: what the shells of one runtime started, found after
 * its server is gone (crashed or killed).
 */
export const killRuntimeProcesses = (runtimeId: string): void => {
  destroyRuntimeCgroups(runtimeId)
  for (const pid of allPids()) {
    if (markerOf(pid)?.startsWith(`${runtimeId}/`)) signal(pid, "SIGKILL")
  }
}

/** Signal a whole process group; a group already gone is not an error. */
export const signalProcessGroup = (pgid: number, sig: NodeJS.Signals): void => signal(-pgid, sig)

/** SIGKILL one process group (the foreground job, a kernel, a server). */
export const killProcessGroup = (pgid: number): void => signalProcessGroup(pgid, "SIGKILL")
