/**
 * The agent_skills plugin (spec §2.7): Python helpers (`open_file`, `goto_line`,
 * `scroll_down`, `scroll_up`, `search_dir`, `search_file`, `find_file`,
 * `file_editor`) imported into the IPython kernel when it starts, as OpenHands
 * runs `from openhands.runtime.plugins.agent_skills.agentskills import *`.
 *
 * The helpers are our Python package `effect_sandbox_skills` (python/ beside this
 * module; `payload/python/` in the server payload), put on the kernel's
 * PYTHONPATH. `file_editor` does not re-implement the editor in Python: it runs
 * our OHEditor in a Node process per call (editorMain.ts; `payload/editor.mjs`),
 * whose undo history lives in a directory, so `undo_edit` works across calls.
 * Like OpenHands' agentskills editor, it is a separate instance from the
 * server's editor, with its own history. Everything the Python side needs is set
 * in the kernel's environment only.
 */
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { RuntimeStartError } from "../../schema/errors.ts"

export const SKILLS_PACKAGE = "effect_sandbox_skills"

/** Run in the kernel after it starts (and after every restart). */
export const SKILLS_INIT_CODE = `from ${SKILLS_PACKAGE} import *`

/** The variables `file_editor` reads (see python/effect_sandbox_skills/file_editor.py). */
export const SKILLS_ENV = {
  node: "EFFECT_SANDBOX_NODE",
  editorEntry: "EFFECT_SANDBOX_EDITOR_ENTRY",
  editorHistory: "EFFECT_SANDBOX_EDITOR_HISTORY"
} as const

export interface AgentSkillsKernel {
  /** Added to the kernel's environment (nothing else sees it). */
  readonly env: Readonly<Record<string, string>>
  readonly initCode: string
}

const firstExisting = (paths: ReadonlyArray<string>): string | undefined => paths.find((path) => existsSync(path))

/**
 * This module lives in src/executor/skills (source), dist/src/executor/skills
 * (built package, whose Python files are in payload/python) or is bundled into
 * payload/server.mjs (so "beside this module" is payload/).
 */
const locate = (here: string) => {
  const dir = dirname(here)
  return {
    python: firstExisting(
      [join(dir, "python"), join(dir, "..", "..", "..", "..", "payload", "python")].filter((d) =>
        existsSync(join(d, SKILLS_PACKAGE, "__init__.py"))
      )
    ),
    editor: firstExisting([join(dir, "editorMain.ts"), join(dir, "editorMain.js"), join(dir, "editor.mjs")])
  }
}

/**
 * The kernel settings for agent_skills: the package on PYTHONPATH (before the
 * user's), the Node binary and editor entry `file_editor` runs, and its history
 * directory under the executor's private `stateDir`.
 */
export const agentSkillsKernel = (
  stateDir: string,
  baseEnv: Readonly<Record<string, string | undefined>>,
  here: string = fileURLToPath(import.meta.url)
): Effect.Effect<AgentSkillsKernel, RuntimeStartError> => {
  const found = locate(here)
  if (found.python === undefined || found.editor === undefined) {
    return Effect.fail(
      new RuntimeStartError({
        message: `Cannot enable agent_skills: ${
          found.python === undefined ? `the Python package ${SKILLS_PACKAGE}` : "the file editor entry"
        } was not found beside ${here} or in the payload: reinstall effect-sandbox (its package ships the payload), or in a checkout run npm run build:payload.`
      })
    )
  }
  const pythonPath = baseEnv["PYTHONPATH"]
  return Effect.succeed({
    env: {
      PYTHONPATH: pythonPath ? `${found.python}${delimiter}${pythonPath}` : found.python,
      [SKILLS_ENV.node]: process.execPath,
      [SKILLS_ENV.editorEntry]: found.editor,
      [SKILLS_ENV.editorHistory]: join(stateDir, "skills-editor-history")
    },
    initCode: SKILLS_INIT_CODE
  })
}
