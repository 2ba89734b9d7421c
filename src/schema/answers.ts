/**
 * Which observations answer which action. Besides an `ErrorObservation`, which can answer any
 * action, a runtime answers each action with one of these: the shortcuts (`read`,
 * `runCommand`, ...) keep their return types true with it, and a strict `TestRuntime` refuses a
 * scripted step that could not have answered the action the code sent.
 */
import type { Action } from "./Action.ts"
import type { Observation } from "./Observation.ts"

export const ANSWERS = {
  CmdRunAction: ["CmdOutputObservation"],
  IPythonRunCellAction: ["IPythonRunCellObservation"],
  FileReadAction: ["FileReadObservation"],
  FileWriteAction: ["FileWriteObservation"],
  FileEditAction: ["FileEditObservation"],
  // Navigating to a file downloads it, as in OpenHands.
  BrowseURLAction: ["BrowserOutputObservation", "FileDownloadObservation"],
  BrowseInteractiveAction: ["BrowserOutputObservation", "FileDownloadObservation"],
  McpCallAction: ["McpObservation"]
} as const satisfies Record<Action["_tag"], ReadonlyArray<Observation["_tag"]>>

/** Whether a runtime could answer `action` with `observation`. */
export const answers = (action: Action, observation: Observation): boolean =>
  observation._tag === "ErrorObservation" ||
  (ANSWERS[action._tag] as ReadonlyArray<Observation["_tag"]>).includes(observation._tag)

/** The actions `observation` can answer (`[]` for an `ErrorObservation`, which answers any). */
export const answeredBy = (observation: Observation): ReadonlyArray<Action["_tag"]> =>
  (Object.keys(ANSWERS) as Array<Action["_tag"]>).filter((tag) =>
    (ANSWERS[tag] as ReadonlyArray<Observation["_tag"]>).includes(observation._tag)
  )
