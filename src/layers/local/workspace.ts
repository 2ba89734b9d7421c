/** A runtime's workspace: the given directory, or a temporary one removed with the scope unless kept. */
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface WorkspaceChoice {
  /** Use this directory (created if missing, never removed). */
  readonly workspace?: string | undefined
  /** Keep a temporary workspace after release. */
  readonly keepWorkspace?: boolean | undefined
}

export const scopedWorkspace = (choice: WorkspaceChoice, label: string) =>
  choice.workspace !== undefined
    ? Effect.sync(() => {
      mkdirSync(choice.workspace!, { recursive: true })
      return realpathSync(choice.workspace!)
    })
    : Effect.acquireRelease(
      Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), `effect-sandbox-${label}-`)))),
      (dir) => choice.keepWorkspace ? Effect.void : Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
