/**
 * Where `/build` contexts wait for their build: a directory each in the temp dir, named after the
 * server's pid. A build removes its own when it ends; a server killed mid-build cannot, so each
 * server removes, as it starts, those of servers that are gone.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processAlive } from "../runtime/processAlive.ts"

const PREFIX = "effect-sandbox-build-context-"

/** A new directory for one context, owner-only (mkdtemp makes it 0700). */
export const newContextDir = () => mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`))

/** Remove the context directories of servers that are no longer running. */
export const removeOrphanContexts = () => {
  for (const name of readdirSync(tmpdir())) {
    const pid = name.startsWith(PREFIX) ? Number.parseInt(name.slice(PREFIX.length), 10) : Number.NaN
    if (Number.isInteger(pid) && !processAlive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true })
  }
}
