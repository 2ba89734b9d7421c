/**
 * Whether a process of this host (and PID namespace) is alive: signal 0 checks without touching
 * it, and EPERM means it exists under another user. Only for records written on this host (a
 * build lock, an owner pid in a sandbox's metadata), never across machines.
 */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
