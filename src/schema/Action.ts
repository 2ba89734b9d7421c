/**
 * Actions: what an agent asks the sandbox to do (spec §3).
 *
 * Class and field names follow OpenHands (camelCase here, snake_case on the wire,
 * see `wire.ts`); defaults are OpenHands' dataclass defaults so prompts and
 * clients written for OpenHands keep working.
 */
import { Schema } from "effect"
import { actionBase, ConfirmationState, hardTimeout, JsonObject, withDefault } from "./fields.ts"
import { namingBadFields } from "./issues.ts"

/** Run a command in the persistent bash session (`run`). */
export class CmdRunAction extends namingBadFields(
  Schema.TaggedClass<CmdRunAction>()("CmdRunAction", {
    /** The command or script; `""` fetches more output of the running command. */
    command: Schema.String,
    /** Send `command` as input (text or keys like `C-c`) to the running process. */
    isInput: withDefault(Schema.Boolean, false),
    thought: actionBase.thought,
    /** No soft (no-change) timeout: wait for completion or the hard timeout. */
    blocking: withDefault(Schema.Boolean, false),
    /** Run in a fresh, separate shell (in `cwd`) instead of the session's shell. */
    isStatic: withDefault(Schema.Boolean, false),
    cwd: withDefault(Schema.NullOr(Schema.String), null),
    /** Not shown to the agent; output is not truncated. */
    hidden: withDefault(Schema.Boolean, false),
    confirmationState: withDefault(ConfirmationState, "confirmed"),
    securityRisk: actionBase.securityRisk,
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Running command: ${this.command}`
  }
}

/** Run a cell in the session's IPython kernel (`run_ipython`). */
export class IPythonRunCellAction extends namingBadFields(
  Schema.TaggedClass<IPythonRunCellAction>()("IPythonRunCellAction", {
    code: Schema.String,
    thought: actionBase.thought,
    includeExtra: withDefault(Schema.Boolean, true),
    confirmationState: withDefault(ConfirmationState, "confirmed"),
    securityRisk: actionBase.securityRisk,
    kernelInitCode: withDefault(Schema.String, ""),
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Running Python code interactively: ${this.code}`
  }
}

/** Read a file, whole or by 0-based line range (`read`); `implSource: "oh_aci"` uses the editor's view. */
export class FileReadAction extends namingBadFields(
  Schema.TaggedClass<FileReadAction>()("FileReadAction", {
    path: Schema.String,
    start: withDefault(Schema.Int, 0),
    end: withDefault(Schema.Int, -1),
    thought: actionBase.thought,
    securityRisk: actionBase.securityRisk,
    implSource: withDefault(Schema.Literals(["default", "oh_aci"]), "default"),
    viewRange: withDefault(Schema.NullOr(Schema.Array(Schema.Int)), null),
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Reading file: ${this.path}`
  }
}

/** Write a file, whole or spliced into a line range (`write`). */
export class FileWriteAction extends namingBadFields(
  Schema.TaggedClass<FileWriteAction>()("FileWriteAction", {
    path: Schema.String,
    content: Schema.String,
    start: withDefault(Schema.Int, 0),
    end: withDefault(Schema.Int, -1),
    thought: actionBase.thought,
    securityRisk: actionBase.securityRisk,
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Writing file: ${this.path}`
  }
}

/**
 * OHEditor's commands (spec §3), and `""`: OpenHands' default, which only an `llm_based_edit`
 * action leaves as it is. A literal union so a typo is a compile error, not an editor message;
 * the action server still answers OpenHands clients' other strings as OpenHands does
 * (server/routes/actions.ts).
 */
export const FileEditCommand = Schema.Literals(["view", "create", "str_replace", "insert", "undo_edit", ""])
export type FileEditCommand = typeof FileEditCommand.Type

/** Edit a file with the OHEditor commands: view, create, str_replace, insert, undo_edit (`edit`). */
export class FileEditAction extends namingBadFields(
  Schema.TaggedClass<FileEditAction>()("FileEditAction", {
    path: Schema.String,
    command: withDefault(FileEditCommand, ""),
    fileText: withDefault(Schema.NullOr(Schema.String), null),
    oldStr: withDefault(Schema.NullOr(Schema.String), null),
    newStr: withDefault(Schema.NullOr(Schema.String), null),
    /** OpenHands accepts a numeric string here and answers a non-numeric one with an editor error. */
    insertLine: withDefault(Schema.NullOr(Schema.Union([Schema.Int, Schema.String])), null),
    /** Fields of the LLM-based draft editor (run on the agent side of `Runtime.run`: src/editor/draftEditor.ts). */
    content: withDefault(Schema.String, ""),
    start: withDefault(Schema.Int, 1),
    end: withDefault(Schema.Int, -1),
    thought: actionBase.thought,
    securityRisk: actionBase.securityRisk,
    implSource: withDefault(Schema.Literals(["oh_aci", "llm_based_edit"]), "oh_aci"),
    timeout: hardTimeout
  })
) {
  get message(): string {
    return ""
  }
}

/** Open a URL in the session's browser (`browse`). */
export class BrowseURLAction extends namingBadFields(
  Schema.TaggedClass<BrowseURLAction>()("BrowseURLAction", {
    url: Schema.String,
    thought: actionBase.thought,
    securityRisk: actionBase.securityRisk,
    returnAxtree: withDefault(Schema.Boolean, false),
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Browsing URL: ${this.url}`
  }
}

/** Run BrowserGym actions such as `click("12")` in the session's browser (`browse_interactive`). */
export class BrowseInteractiveAction extends namingBadFields(
  Schema.TaggedClass<BrowseInteractiveAction>()("BrowseInteractiveAction", {
    browserActions: Schema.String,
    thought: actionBase.thought,
    browsergymSendMsgToUser: withDefault(Schema.String, ""),
    securityRisk: actionBase.securityRisk,
    returnAxtree: withDefault(Schema.Boolean, false),
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `Executing browser actions: ${this.browserActions}`
  }
}

/** Call a tool on one of the session's MCP servers (`call_tool_mcp`). */
export class McpCallAction extends namingBadFields(
  Schema.TaggedClass<McpCallAction>()("McpCallAction", {
    name: Schema.String,
    arguments: withDefault(JsonObject, {}),
    thought: actionBase.thought,
    securityRisk: actionBase.securityRisk,
    timeout: hardTimeout
  })
) {
  get message(): string {
    return `I am interacting with the MCP server with name: ${this.name}`
  }
}

/** Every runnable action. */
export const Action = Schema.Union([
  CmdRunAction,
  IPythonRunCellAction,
  FileReadAction,
  FileWriteAction,
  FileEditAction,
  BrowseURLAction,
  BrowseInteractiveAction,
  McpCallAction
]).pipe(Schema.toTaggedUnion("_tag"))
export type Action = typeof Action.Type
