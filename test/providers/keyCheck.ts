/**
 * A shell line for a sandbox started by a hosted runtime: whether some process (the server) has
 * the session key's SHA-256 in its environment (`digest=yes`), and how many process environments
 * hold the key itself (`key=0`).
 */
import { createHash } from "node:crypto"

export const keyCheck = (key: string) => {
  const digest = createHash("sha256").update(key).digest("hex")
  const environs = `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'`
  return `${environs} | grep -q -x 'EFFECT_SANDBOX_SESSION_API_KEY_SHA256=${digest}' && echo digest=yes || ` +
    `echo digest=no; echo key=$(${environs} | grep -c -F -e '${key}')`
}
