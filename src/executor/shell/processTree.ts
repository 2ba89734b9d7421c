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
