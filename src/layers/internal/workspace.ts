/** A runtime's workspace: the given directory, or a temporary one removed with the scope unless kept. */
import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { InvalidOptionsError } from "../../schema/errors.ts"

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

export const scopedWorkspace = (choice: WorkspaceChoice, label: string, subject: string) =>
  choice.workspace !== undefined
    ? ensureDirectory(choice.workspace, subject)
    : Effect.acquireRelease(
      Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), `effect-sandbox-${label}-`)))),
      (dir) => choice.keepWorkspace ? Effect.void : Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
