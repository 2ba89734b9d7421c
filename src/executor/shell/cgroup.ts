/**
 * Per-shell cgroups, where this process may create them (Linux, root or a
 * delegated subtree). A shell joins its cgroup before it execs bash, so every
 * process it ever starts is in it, whatever it does to its environment, session
 * or parent (`env -i`, `setsid`, double forks): release kills the cgroup, not a
 * guess from the process table. The cgroups of one runtime sit under
 * `effect-sandbox/<runtime>/`, whose `pids.max` bounds the whole session (a fork
 * bomb stops there instead of starving the host or other sessions).
 *
 * Layout: `<own cgroup>/effect-sandbox/<runtime>/<shell>` in the cgroup v2
 * hierarchy (membership, `cgroup.kill`, and `pids.max` when the pids controller
 * is there) and in the v1 `pids` hierarchy (the limit on hybrid hosts).
 * Where neither can be written (unprivileged, read-only in a container), there
 * is no cgroup and callers fall back to the process table (processTree.ts).
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** Default limit on processes (and threads) of one session: room for builds and Chromium, not for a bomb. */
export const DEFAULT_PIDS_LIMIT = 1024

/** How long `destroy` waits for killed processes to leave their cgroup. */
const DRAIN_MS = 3_000

const read = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return null
  }
}

const tryWrite = (file: string, text: string): boolean => {
  try {
    writeFileSync(file, text)
    return true
  } catch {
    return false
  }
}

/** `<mount point>` of each cgroup mount, with its type and super options (`/proc/self/mountinfo`). */
const cgroupMounts = () =>
  (read("/proc/self/mountinfo") ?? "").split("\n").flatMap((line) => {
    const [left, right] = line.split(" - ")
    if (left === undefined || right === undefined) return []
    const fields = left.split(" ")
    const [type, , options] = right.split(" ")
    if (type !== "cgroup" && type !== "cgroup2") return []
    return [{ root: fields[3]!, mountPoint: fields[4]!, v2: type === "cgroup2", options: (options ?? "").split(",") }]
  })

/** This process's cgroup path in the v2 hierarchy (`""` key) and in each v1 controller (`/proc/self/cgroup`). */
const ownCgroups = (): Map<string, string> =>
  new Map(
    (read("/proc/self/cgroup") ?? "").split("\n").flatMap((line) => {
      const match = /^\d+:([^:]*):(.*)$/.exec(line)
      return match === null ? [] : match[1]!.split(",").map((controller) => [controller, match[2]!] as const)
    })
  )

/** `<mount><own cgroup>/effect-sandbox` in each usable hierarchy: each must let us create it. */
const detect = (): ReadonlyArray<string> => {
  const own = ownCgroups()
  const found: Array<string> = []
  for (const mount of cgroupMounts()) {
    const path = mount.v2 ? own.get("") : mount.options.includes("pids") ? own.get("pids") : undefined
    if (path === undefined) continue
    // Inside a cgroup namespace or a bind mount, the mount's root is a prefix of our path.
    const relative = path.startsWith(mount.root) ? path.slice(mount.root.length) : path
    const ownDir = join(mount.mountPoint, relative)
    const base = join(ownDir, "effect-sandbox")
    try {
      mkdirSync(base, { recursive: true })
    } catch {
      continue
    }
    // v2 needs the pids controller enabled down to our directories (best effort: not every host allows it).
    if (mount.v2) tryWrite(join(ownDir, "cgroup.subtree_control"), "+pids")
    if (mount.v2) tryWrite(join(base, "cgroup.subtree_control"), "+pids")
    found.push(base)
  }
  return found
}

let hierarchies: ReadonlyArray<string> | null = null
const usable = () => (hierarchies ??= process.platform === "linux" ? detect() : [])

/** A directory name from a marker part (runtime ids are UUIDs; anything else is made safe). */
const dirName = (part: string) => part.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_") || "_"

const pidsIn = (dir: string): Array<number> =>
  (read(join(dir, "cgroup.procs")) ?? "").split("\n").filter((l) => l !== "").map(Number)

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * SIGKILL everything in `dir` (one write to `cgroup.kill` on v2, else every listed
 * pid until none is left: nothing escapes, and a bomb cannot outrun it past the
 * pids limit), then remove it. Children first, so nested cgroups go too.
 */
const destroyDir = (dir: string): void => {
  let children: Array<string> = []
  try {
    children = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)
  } catch {
    return
  }
  for (const child of children) destroyDir(join(dir, child))
  const killFile = join(dir, "cgroup.kill")
  for (let waited = 0; waited < DRAIN_MS; waited += 10) {
    const pids = pidsIn(dir)
    if (pids.length === 0) break
    if (!tryWrite(killFile, "1")) {
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // already gone
        }
      }
    }
    sleepSync(10)
  }
  try {
    rmdirSync(dir)
  } catch {
    // still populated (a process stuck in the kernel) or already removed
  }
}

/** A `pids.events` file kept open: its `max` count (how many forks the limit refused) read again at offset 0. */
interface LimitEvents {
  readonly count: () => number
  readonly close: () => void
}

/**
 * Open `dir`'s `pids.events` once: the count is read twice a command, and a read at offset 0 of
 * the open file (the kernel makes its text anew) is one syscall where a `readFileSync` was four.
 */
const limitEvents = (dir: string): LimitEvents => {
  let fd: number | null = null
  try {
    fd = openSync(join(dir, "pids.events"), "r")
  } catch {
    return { count: () => 0, close: () => undefined }
  }
  const buffer = Buffer.alloc(256)
  return {
    count: () => {
      if (fd === null) return 0
      try {
        const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, buffer.length, 0))
        return Number(/^max (\d+)/m.exec(text)?.[1] ?? 0)
      } catch {
        return 0
      }
    },
    close: () => {
      if (fd !== null) closeSync(fd)
      fd = null
    }
  }
}

/** One shell's cgroup, in every usable hierarchy. */
export interface ShellCgroup {
  /** The `cgroup.procs` files the shell writes its own pid to before it execs bash. */
  readonly procsFiles: ReadonlyArray<string>
  /** The session's process limit, or null where no pids controller is available. */
  readonly pidsLimit: number | null
  /** How many forks the session's limit has refused so far (rises when a fork bomb or runaway build hits it). */
  readonly limitHits: () => number
  /** SIGKILL every process of the shell (bash included), remove the shell's cgroup, and the runtime's once its last shell is gone. */
  readonly destroy: () => void
}

/**
 * Create the cgroup of one shell, marked `<runtime id>/<shell>`, limiting the
 * runtime to `pidsLimit` processes; null where no hierarchy is writable.
 */
export const makeShellCgroup = (marker: string, pidsLimit: number): ShellCgroup | null => {
  const cut = marker.lastIndexOf("/")
  const created = usable().flatMap((base) => {
    const runtimeDir = join(base, dirName(marker.slice(0, Math.max(cut, 0))))
    const dir = join(runtimeDir, dirName(marker.slice(cut + 1)))
    try {
      mkdirSync(dir, { recursive: true })
    } catch {
      return []
    }
    const limited = tryWrite(join(runtimeDir, "pids.max"), String(pidsLimit))
    return [{ runtimeDir, dir, limited }]
  })
  if (created.length === 0) return null
  const limited = created.filter((c) => c.limited)
  // v1 counts a refused fork in the cgroup of the forking task, v2 in the limiting one: read both.
  const events = limited.flatMap((c) => [limitEvents(c.runtimeDir), limitEvents(c.dir)])
  return {
    procsFiles: created.map((c) => join(c.dir, "cgroup.procs")),
    pidsLimit: limited.length > 0 ? pidsLimit : null,
    limitHits: () => events.reduce((sum, e) => sum + e.count(), 0),
    destroy: () => {
      for (const e of events) e.close()
      for (const c of created) {
        destroyDir(c.dir)
        try {
          rmdirSync(c.runtimeDir)
        } catch {
          // other shells of the runtime are still there
        }
      }
    }
  }
}

/** Kill every process in every cgroup of `runtimeId` and remove them (its server is gone). */
export const destroyRuntimeCgroups = (runtimeId: string): void => {
  for (const base of usable()) destroyDir(join(base, dirName(runtimeId)))
}

/** True when this host lets us put sessions in cgroups (for tests and diagnostics). */
export const cgroupsAvailable = (): boolean => usable().length > 0
