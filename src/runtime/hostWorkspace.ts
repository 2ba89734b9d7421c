/**
 * A runtime's workspace: the given directory, or a temporary one removed with the scope unless
 * kept. Temporary workspaces live in a directory of the owner's that no one else may enter
 * (`workspaceParent`): a sandbox may open up its own workspace (DockerRuntime hands it to the
 * sandbox user) or plant a set-uid binary there, and other users of the host must not reach it.
 */
import { Effect, type Scope } from "effect"
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"

export interface WorkspaceChoice {
  /** Use this directory (created if missing, never removed). */
  readonly workspace?: string | undefined
  /** Keep a temporary workspace after release. */
  readonly keepWorkspace?: boolean | undefined
}

/**
 * Create `path` one missing level at a time: Node's `mkdirSync(..., { recursive: true })` spins at
 * 100 % CPU forever under `/proc` (each mkdir there fails with ENOENT, which it retries), and under a
 * regular file its ENOTDIR would be a defect. Here the walk is bounded by the path's depth and every
 * failure is an `InvalidOptionsError` naming the directory.
 */
const ensureDirectory = (path: string, subject: string): Effect.Effect<string, InvalidOptionsError> =>
  Effect.try({
    try: () => {
      const target = resolve(path)
      const missing: Array<string> = []
      let existing = target
      while (!existsSync(existing)) {
        missing.unshift(existing)
        existing = dirname(existing)
      }
      if (!statSync(existing).isDirectory()) throw new Error(`${existing} is not a directory`)
      for (const dir of missing) mkdirSync(dir)
      return realpathSync(target)
    },
    catch: (error) =>
      new InvalidOptionsError({
        message: `Invalid ${subject}: workspace: cannot create ${path} (${
          (error as NodeJS.ErrnoException).code ?? (error as Error).message
        })`
      })
  })

/** Where this user's temporary workspaces are made (one directory per uid: `/tmp` is shared). */
export const workspaceParentPath = (): string =>
  join(tmpdir(), `effect-sandbox-workspaces-${process.getuid?.() ?? "user"}`)

/**
 * The owner's directory of temporary workspaces, made if missing: mode 0700, owned by this
 * process's user, so that only the owner (and root) can pass through it to a workspace. A
 * container reaches its workspace through its bind mount, without passing through it. One that
 * exists must be this user's own directory (not a link): in a shared `/tmp` another user could
 * have made it first, to reach every workspace made inside.
 */
export const workspaceParent: Effect.Effect<string, RuntimeStartError> = Effect.try({
  try: () => {
    const dir = workspaceParentPath()
    try {
      mkdirSync(dir, { mode: 0o700 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const found = lstatSync(dir)
    const uid = process.getuid?.()
    if (!found.isDirectory()) throw new Error(`${dir} is not a directory`)
    if (uid !== undefined && found.uid !== uid) {
      throw new Error(
        `${dir} belongs to uid ${found.uid}, not to this user (uid ${uid}): whoever made it could enter every ` +
          "workspace made in it. Remove it, or point TMPDIR elsewhere"
      )
    }
    if ((found.mode & 0o077) !== 0) chmodSync(dir, 0o700)
    return realpathSync(dir)
  },
  catch: (error) =>
    new RuntimeStartError({
      message: `Cannot make the private directory of temporary workspaces: ${(error as Error).message}`
    })
})

/** A new temporary workspace in the owner's directory (`workspaceParent`), `effect-sandbox-<label>-*`. */
export const temporaryWorkspace = (label: string): Effect.Effect<string, RuntimeStartError> =>
  Effect.map(workspaceParent, (parent) => realpathSync(mkdtempSync(join(parent, `effect-sandbox-${label}-`))))

export const scopedWorkspace = (
  choice: WorkspaceChoice,
  label: string,
  subject: string
): Effect.Effect<string, InvalidOptionsError | RuntimeStartError, Scope.Scope> =>
  choice.workspace !== undefined
    ? ensureDirectory(choice.workspace, subject)
    : Effect.acquireRelease(
      temporaryWorkspace(label),
      (dir) => choice.keepWorkspace ? Effect.void : Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
