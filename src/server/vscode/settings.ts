/**
 * The workspace settings OpenHands' VS Code plugin copies to `<workspace>/.vscode/settings.json`
 * before the IDE starts: no start-up editor or walkthroughs, the dark theme. OpenHands makes the
 * file 0666 because its server runs as root and its IDE as the sandbox user; here both run as the
 * same user, so it is 0644: a world-writable settings file in a user's checkout (LocalRuntime on a
 * shared host) would let any local user set the IDE's terminal profiles and tasks.
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
    chmodSync(file, 0o644)
    return file
  })
