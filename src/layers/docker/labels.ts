/**
 * Every container a DockerRuntime creates carries labels naming its session and
 * its owner (host, pid and the pid's start time, so a reused pid is not mistaken
 * for the owner). The reaper removes containers whose owner on this host is gone.
 */
import { readFileSync } from "node:fs"
import { hostname } from "node:os"

export const LABEL = {
  managed: "effect-sandbox.managed",
  session: "effect-sandbox.session",
  ownerHost: "effect-sandbox.owner.host",
  ownerPid: "effect-sandbox.owner.pid",
  ownerStart: "effect-sandbox.owner.start",
  createdAt: "effect-sandbox.created-at",
  version: "effect-sandbox.version",
  /** Containers kept alive on release are not reaped with their owner. */
  keepAlive: "effect-sandbox.keep-alive",
  /** A temporary host workspace we created: removed with the container, whoever removes it last. */
  temporaryWorkspace: "effect-sandbox.temporary-workspace"
} as const

/** The start time of a process (clock ticks since boot), or null when it does not exist. */
export const processStartTime = (pid: number): string | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null
  } catch {
    return null
  }
}

export interface Owner {
  readonly host: string
  readonly pid: number
  readonly start: string
}

export const currentOwner = (): Owner => ({
  host: hostname(),
  pid: process.pid,
  start: processStartTime(process.pid) ?? "unknown"
})

export const ownerLabels = (owner: Owner): Record<string, string> => ({
  [LABEL.ownerHost]: owner.host,
  [LABEL.ownerPid]: String(owner.pid),
  [LABEL.ownerStart]: owner.start
})

/** True when the labelled owner ran on this host and is no longer alive (or its pid was reused). */
export const ownerIsGone = (labels: Readonly<Record<string, string>>, host = hostname()): boolean => {
  if (labels[LABEL.ownerHost] !== host) return false
  const pid = Number(labels[LABEL.ownerPid])
  if (!Number.isInteger(pid) || pid <= 0) return false
  const start = processStartTime(pid)
  return start === null || start !== labels[LABEL.ownerStart]
}
