/**
 * Where the server's session key comes from. OpenHands passes it as `SESSION_API_KEY`, but
 * a process's initial environment stays readable in `/proc/<pid>/environ` by every process
 * of the same user, sandboxed commands included, even after `process.env` drops it. So our
 * own launchers hand it over another way, read once at start, before any command runs:
 * - LocalRuntime: an inherited pipe named by `EFFECT_SANDBOX_SESSION_API_KEY_FD`, read to its
 *   end, then closed (so no child inherits the descriptor);
 * - DockerRuntime: a file named by `EFFECT_SANDBOX_SESSION_API_KEY_FILE`, copied into the
 *   container before it starts, read, then removed (so no command finds it).
 * `SESSION_API_KEY` still works, readable through /proc.
 */
import { closeSync, readFileSync, unlinkSync } from "node:fs"
import { SESSION_KEY_FD_VARIABLE, SESSION_KEY_FILE_VARIABLE } from "../executor/childEnv.ts"

const fromDescriptor = (fd: string): string => {
  const descriptor = Number(fd)
  try {
    return readFileSync(descriptor, "utf8")
  } finally {
    closeSync(descriptor)
  }
}

/** Read and remove: a key file left behind would hand the key to the sandbox's commands. */
const fromFile = (file: string): string => {
  const key = readFileSync(file, "utf8")
  unlinkSync(file)
  return key
}

/** The session key, or undefined (or "") for none: OpenHands tests it for truth. */
export const readSessionKey = (env: NodeJS.ProcessEnv): string | undefined => {
  const fd = env[SESSION_KEY_FD_VARIABLE]
  if (fd !== undefined && fd !== "") return fromDescriptor(fd)
  const file = env[SESSION_KEY_FILE_VARIABLE]
  if (file !== undefined && file !== "") return fromFile(file)
  return env["SESSION_API_KEY"]
}
