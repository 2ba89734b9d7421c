/**
 * The name of a session's sandbox. Daytona's list is eventually consistent (its API says so), so
 * an attach right after a create could miss the sandbox and make a second one; a name is unique in
 * the organisation (a database constraint: a second create of it is refused with 409 "Sandbox with
 * name ... already exists") and `get` by name reads the database. So every sandbox is named after
 * its session, and the session's sandbox is looked up by that name before the list is asked.
 */
import { createHash } from "node:crypto"

/** `effect-sandbox-` and 24 hex digits of the session id's SHA-256: any session id, a name Daytona accepts. */
export const sandboxName = (sessionId: string): string =>
  `effect-sandbox-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}`
