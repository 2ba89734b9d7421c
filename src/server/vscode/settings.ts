/**
 * The workspace settings OpenHands' VS Code plugin copies to `<workspace>/.vscode/settings.json`
 * (mode 0666, so the sandbox user and the IDE can both change them) before the IDE starts: no
 * start-up editor or walkthroughs, the dark theme.
 */
import { Effect } from "effect"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** OpenHands' `plugins/vscode/settings.json`, as its file has it. */
export const OPENHANDS_VSCODE_SETTINGS = `{
    "workbench.startupEditor": "none",
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.settings.applyToAllProfiles": [
        "workbench.startupEditor"
    ]
}`

/** Writes (replacing, as OpenHands' `shutil.copy` does) `<workspace>/.vscode/settings.json`. */
export const writeVsCodeSettings = (workspace: string) =>
  Effect.try(() => {
    const dir = join(workspace, ".vscode")
    mkdirSync(dir, { recursive: true })
    const file = join(dir, "settings.json")
    writeFileSync(file, OPENHANDS_VSCODE_SETTINGS)
    chmodSync(file, 0o666)
    return file
  })
