/**
 * Where the server's session key comes from. OpenHands passes it as `SESSION_API_KEY`, but
 * a process's initial environment stays readable in `/proc/<pid>/environ` by every process
 * of the same user, sandboxed commands included, even after `process.env` drops it. So our
 * own launchers (LocalRuntime) hand it over through an inherited pipe instead, named by
 * `EFFECT_SANDBOX_SESSION_API_KEY_FD`: read to its end once at start, then closed (so no
 * child inherits the descriptor). `SESSION_API_KEY` still works, readable through /proc.
 */
import { closeSync, readFileSync } from "node:fs"
import { SESSION_KEY_FD_VARIABLE } from "../executor/childEnv.ts"

/** The session key, or undefined (or "") for none: OpenHands tests it for truth. */
export const readSessionKey = (env: NodeJS.ProcessEnv): string | undefined => {
  const fd = env[SESSION_KEY_FD_VARIABLE]
  if (fd === undefined || fd === "") return env["SESSION_API_KEY"]
  const descriptor = Number(fd)
  try {
    return readFileSync(descriptor, "utf8")
  } finally {
    closeSync(descriptor)
  }
}
