/**
 * Finding and killing everything a shell started, including background jobs
 * that were `disown`ed or `nohup`ed: a process belongs to the shell when it is in
 * the shell's session (node-pty makes bash a session leader) or carries the
 * shell's marker variable in its environment (which survives `setsid`).
 * Linux only (/proc); elsewhere only the process group is signalled.
 */
import { readdirSync, readFileSync } from "node:fs"

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

/** PIDs that belong to the shell `sessionId` / `marker`, excluding this process. */
export const sessionProcesses = (sessionId: number, marker: string): Array<number> =>
  allPids().filter((pid) => {
    const fields = statFields(pid)
    return fields !== null && (Number(fields[3]) === sessionId || markerOf(pid) === marker)
  })

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig)
  } catch {
    // already gone
  }
}

/** SIGKILL the shell's whole session and every process carrying its marker. */
export const killSession = (sessionId: number, marker: string): void => {
  signal(-sessionId, "SIGKILL")
  for (const pid of sessionProcesses(sessionId, marker)) signal(pid, "SIGKILL")
}

/**
 * SIGKILL every process whose marker starts with `runtimeId/`: what the shells of
 * one runtime started, found after its server is gone (crashed or killed).
 */
export const killRuntimeProcesses = (runtimeId: string): void => {
  for (const pid of allPids()) {
    if (markerOf(pid)?.startsWith(`${runtimeId}/`)) signal(pid, "SIGKILL")
  }
}

/** Signal a whole process group; a group already gone is not an error. */
export const signalProcessGroup = (pgid: number, sig: NodeJS.Signals): void => signal(-pgid, sig)

/** SIGKILL one process group (the foreground job, a kernel, a server). */
export const killProcessGroup = (pgid: number): void => signalProcessGroup(pgid, "SIGKILL")
