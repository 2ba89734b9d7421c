/**
 * OHEditor (openhands-aci 0.3.2) as the action execution server runs it: `_execute_file_editor`
 * converts `insert_line`, the editor validates the path and dispatches, and every `ToolError`
 * comes back as `ERROR:\n<message>`. One editor per runtime, so undo history is per runtime.
 *
 * Paths go through `Workspace.locate` to map `/workspace` onto the real directory and to enforce
 * the boundary (a violation is an error like any other), and files are opened through `safeOpen`
 * (regular files and directories only; the opened file checked against the boundary); messages
 * show the agent's path.
 */
import { Effect } from "effect"
import type { Workspace } from "../workspace.ts"
import { viewDirectory } from "./directory.ts"
import { create, insert, strReplace, undoEdit } from "./edit.ts"
import { parameterInvalid, parameterMissing, ToolError } from "./errors.ts"
import { statOrNull } from "./fileText.ts"
import { EditHistory } from "./history.ts"
import { listStr, pathStr, toInt } from "./python.ts"
import type { EditorRequest, EditorResult, OHEditor, Target } from "./types.ts"
import { validatePath } from "./validate.ts"
import { viewFile } from "./view.ts"

export { unifiedDiff } from "./diff.ts"
export { EditHistory } from "./history.ts"
export type { EditorRequest, EditorResult, OHEditor } from "./types.ts"

const COMMANDS = ["view", "create", "str_replace", "insert", "undo_edit"]

/** OHEditor's message for a command it does not know. */
export const unrecognizedCommand = (command: string): string =>
  `Unrecognized command ${command}. The allowed commands for the oh_editor tool are: ${COMMANDS.join(", ")}`

/**
 * The server's `insert_line` conversion: a string goes through `int()`. A fractional number,
 * which Python would pass on and misuse, is refused the same way.
 */
const parseInsertLine = (value: number | string | null): Effect.Effect<number | null, ToolError> => {
  if (value === null) return Effect.succeed(null)
  const parsed = typeof value === "string" ? toInt(value) : Number.isInteger(value) ? value : undefined
  return parsed === undefined
    ? Effect.fail(new ToolError({ message: `Invalid insert_line value: '${value}'. Expected an integer.` }))
    : Effect.succeed(parsed)
}

/**
 * The absolute-path check of `validate_path` (suggesting `<workspace>/<path>` when that exists),
 * then resolution through the workspace.
 */
const locate = (ws: Workspace, path: string, cwd: string): Effect.Effect<Target, ToolError> =>
  Effect.gen(function*() {
    const display = pathStr(path)
    if (!path.startsWith("/")) {
      const suggestion = pathStr(`${ws.mountPath}/${path}`)
      const exists = yield* ws.resolve(suggestion, cwd).pipe(
        Effect.flatMap(statOrNull),
        Effect.map((stats) => stats !== null),
        Effect.catchTag("WorkspaceViolation", () => Effect.succeed(false))
      )
      return yield* parameterInvalid(
        "path",
        display,
        "The path should be an absolute path, starting with `/`." + (exists ? ` Maybe you meant ${suggestion}?` : "")
      )
    }
    const located = yield* ws.locate(path, cwd).pipe(
      Effect.mapError((violation) => new ToolError({ message: violation.message }))
    )
    return { ...located, display }
  })

const viewed = (output: string): EditorResult => ({ output, isError: false, oldFile: null, newFile: null })

const view = (target: Target, viewRange: ReadonlyArray<number> | null): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    const stats = yield* statOrNull(target.path)
    if (!stats?.isDirectory()) return viewed(yield* viewFile(target, viewRange))
    if (viewRange !== null && viewRange.length > 0) {
      return yield* parameterInvalid(
        "view_range",
        listStr(viewRange),
        "The `view_range` parameter is not allowed when `path` points to a directory."
      )
    }
    return viewed(yield* viewDirectory(target))
  })

const execute = (
  ws: Workspace,
  history: EditHistory,
  req: EditorRequest,
  cwd: string
): Effect.Effect<EditorResult, ToolError> =>
  Effect.gen(function*() {
    const insertLine = yield* parseInsertLine(req.insertLine)
    const target = yield* locate(ws, req.path, cwd)
    const { command } = req
    yield* validatePath(command, target)
    switch (command) {
      case "view":
        return yield* view(target, req.viewRange)
      case "create":
        if (req.fileText === null) return yield* parameterMissing(command, "file_text")
        return yield* create(target, req.fileText, history)
      case "str_replace":
        if (req.oldStr === null) return yield* parameterMissing(command, "old_str")
        if (req.newStr === req.oldStr) {
          return yield* parameterInvalid(
            "new_str",
            req.newStr,
            "No replacement was performed. `new_str` and `old_str` must be different."
          )
        }
        return yield* strReplace(target, req.oldStr, req.newStr, history)
      case "insert":
        if (insertLine === null) return yield* parameterMissing(command, "insert_line")
        if (req.newStr === null) return yield* parameterMissing(command, "new_str")
        return yield* insert(target, insertLine, req.newStr, history)
      case "undo_edit":
        return yield* undoEdit(target, history)
      default:
        return yield* new ToolError({ message: unrecognizedCommand(command) })
    }
  })

/** An editor over `ws`; `history` (default: in memory) may live in a directory shared by several editors. */
export const makeEditor = (ws: Workspace, history: EditHistory = new EditHistory()): OHEditor => ({
  run: (req, cwd) =>
    execute(ws, history, req, cwd).pipe(
      Effect.catchTag("ToolError", (error) =>
        Effect.succeed<EditorResult>({
          output: `ERROR:\n${error.message}`,
          isError: true,
          oldFile: null,
          newFile: null
        }))
    )
})
