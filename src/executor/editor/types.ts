/** The editor's public shapes, mirroring the arguments and result of OpenHands' `_execute_file_editor`. */
import type { Effect } from "effect"
import type { Located } from "../files/safeOpen.ts"

export interface EditorRequest {
  readonly command: string
  readonly path: string
  readonly fileText: string | null
  readonly oldStr: string | null
  readonly newStr: string | null
  /** Agents sometimes send it as a string; it is converted as Python's `int()` would. */
  readonly insertLine: number | string | null
  readonly viewRange: ReadonlyArray<number> | null
}

export interface EditorResult {
  /** What the agent sees; failures read `ERROR:\n<message>`. */
  readonly output: string
  readonly isError: boolean
  /** The file before the edit (`null` for views, creations and errors); feeds the observation's diff. */
  readonly oldFile: string | null
  /** The file after the edit (`null` for views and errors). */
  readonly newFile: string | null
}

export interface OHEditor {
  /** Run one editor command; `cwd` is the shell's working directory, used to resolve the path. */
  readonly run: (req: EditorRequest, cwd: string) => Effect.Effect<EditorResult>
}

/**
 * A file the editor works on: where it really is (`path`, resolved; with the boundary that applies
 * when the workspace is restricted) and the path as the agent wrote it, for messages.
 */
export interface Target extends Located {
  /** The agent's path as Python's `pathlib` prints it. */
  readonly display: string
}
