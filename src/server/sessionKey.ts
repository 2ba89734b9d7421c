/**
 * Where the server's session key comes from. OpenHands passes it as `SESSION_API_KEY`, but
 * a process's initial environment stays readable in `/proc/<pid>/environ` by every process
 * of the same user, sandboxed commands included, even after `process.env` drops it. So our
 * own launchers hand it over another way, read once at start, before any command runs:
 * - LocalRuntime: an inherited pipe named by `EFFECT_SANDBOX_SESSION_API_KEY_FD`, read to its
 *   end, then closed (so no child inherits the descriptor);
 * - every other launcher of ours (Docker, the runtime API's Docker sandboxes, Kubernetes, the cloud
 *   runtimes): not the key at all, its SHA-256 in `EFFECT_SANDBOX_SESSION_API_KEY_SHA256`
 *   (`sessionKeyDigestEnv`). The server only verifies keys (auth.ts compares digests), so a digest
 *   in /proc/1/environ gives a command nothing to call the server with;
 * - Docker containers made before the digest was used: a file named by
 *   `EFFECT_SANDBOX_SESSION_API_KEY_FILE`, copied in before each start, read, then removed.
 * `SESSION_API_KEY` still works, readable through /proc.
 */
import { createHash } from "node:crypto"
import { closeSync, readFileSync, unlinkSync } from "node:fs"
import {
  SESSION_KEY_FD_VARIABLE,
  SESSION_KEY_FILE_VARIABLE,
  SESSION_KEY_SHA256_VARIABLE
} from "../executor/childEnv.ts"

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

/** The SHA-256 every request's key is compared with (auth.ts). */
export const keyDigest = (key: string): Buffer => createHash("sha256").update(key).digest()

/** The server's environment entry giving it the key's digest (hex), never the key: what `readSessionKeyDigest` reads. */
export const sessionKeyDigestEnv = (key: string) => ({ [SESSION_KEY_SHA256_VARIABLE]: keyDigest(key).toString("hex") })

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * The digest of the session key the server checks requests against: of the key it was handed
 * (`readSessionKey`), or the one given as such; undefined for none. A malformed digest is refused
 * (thrown), never taken as "no key".
 */
export const readSessionKeyDigest = (env: NodeJS.ProcessEnv): Buffer | undefined => {
  const given = env[SESSION_KEY_SHA256_VARIABLE]
  if (given !== undefined && given !== "") {
    if (!SHA256_HEX.test(given)) throw new Error(`${SESSION_KEY_SHA256_VARIABLE} must be 64 lowercase hex digits`)
    return Buffer.from(given, "hex")
  }
  const key = readSessionKey(env)
  return key ? keyDigest(key) : undefined
}
