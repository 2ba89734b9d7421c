/**
 * The sandboxes made on this host, per Modal app: a file per sandbox id in a directory of the
 * user's temporary directory, written when a sandbox is made and removed when it is terminated or
 * found ended. Modal's `list()` is the only way to enumerate sandboxes, and the SDK's own docs
 * disagree on whether it returns the V2 sandboxes `create` makes by default; the reaper judges
 * only owners of this host, so this host's record of what it made is all it needs, whatever
 * `list()` returns (each id is then looked up with `fromId`, which the SDK guarantees).
 */
import { mkdir, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The app's directory (per user: another user's sandboxes are not ours to judge). */
const directory = (appId: string) =>
  join(tmpdir(), `effect-sandbox-modal-${process.getuid?.() ?? "user"}`, appId.replace(/[^\w.-]/g, "_"))

/** Remember a sandbox made in `appId`. */
export const remember = async (appId: string, sandboxId: string): Promise<void> => {
  await mkdir(directory(appId), { recursive: true, mode: 0o700 })
  await writeFile(join(directory(appId), sandboxId), "")
}

/** Forget a sandbox (terminated, or found ended). */
export const forget = (appId: string, sandboxId: string): Promise<void> =>
  rm(join(directory(appId), sandboxId), { force: true })

/** The sandboxes of `appId` made on this host and not yet forgotten. */
export const remembered = (appId: string): Promise<Array<string>> => readdir(directory(appId)).catch(() => [])
