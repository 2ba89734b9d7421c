/**
 * `/server_info` (spec §2.4): uptime, idle time and resource use. OpenHands
 * sleeps 0.1 s to sample CPU; we take the CPU share since the previous call, so
 * the endpoint answers at once.
 *
 * The path is open, as in OpenHands (clients poll it before they use the key), but its
 * `resources` are the host's: the disk's size and use, memory against the host's total, I/O.
 * Without the key it answers only `uptime` and `idle_time`, which is what keyless readers use (the
 * runtime API's idle sweep, runtimeApi/activity.ts); OpenHands' client sends the key on every
 * request and gets the whole answer.
 */
import { readFileSync, statfsSync } from "node:fs"
import { totalmem } from "node:os"

export interface ServerClock {
  readonly startedAt: number
  /** Start of the last /execute_action (OpenHands' last_execution_time). */
  lastActionAt: number
}

const procNumber = (file: string, key: string): number => {
  try {
    const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(key))
    return line === undefined ? 0 : Number.parseInt(line.slice(key.length).trim(), 10) || 0
  } catch {
    return 0
  }
}

let lastCpu = { usage: process.cpuUsage(), at: performance.now() }

const cpuPercent = (): number => {
  const now = performance.now()
  const usage = process.cpuUsage(lastCpu.usage)
  const elapsedUs = (now - lastCpu.at) * 1000
  lastCpu = { usage: process.cpuUsage(), at: now }
  return elapsedUs <= 0 ? 0 : Math.round(((usage.user + usage.system) / elapsedUs) * 1000) / 10
}

const disk = (dir: string) => {
  try {
    const s = statfsSync(dir)
    const total = s.blocks * s.bsize
    const free = s.bavail * s.bsize
    const used = total - s.bfree * s.bsize
    return { total, used, free, percent: total === 0 ? 0 : Math.round((used / total) * 1000) / 10 }
  } catch {
    return { total: 0, used: 0, free: 0, percent: 0 }
  }
}

export const serverInfo = (clock: ServerClock, workingDir: string) => {
  const now = Date.now()
  const rss = process.memoryUsage().rss
  return {
    uptime: (now - clock.startedAt) / 1000,
    idle_time: (now - clock.lastActionAt) / 1000,
    resources: {
      cpu_percent: cpuPercent(),
      memory: {
        rss,
        vms: procNumber("/proc/self/status", "VmSize:") * 1024,
        percent: Math.round((rss / totalmem()) * 1000) / 10
      },
      disk: disk(workingDir),
      io: {
        read_bytes: procNumber("/proc/self/io", "read_bytes:"),
        write_bytes: procNumber("/proc/self/io", "write_bytes:")
      }
    }
  }
}

/** What `/server_info` tells a request without the session key: its clocks, no host facts. */
export const openServerInfo = (info: { readonly uptime?: unknown; readonly idle_time?: unknown }) => ({
  uptime: info.uptime,
  idle_time: info.idle_time
})
