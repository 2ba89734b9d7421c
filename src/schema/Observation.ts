/**
 * Observations: what the sandbox answers (spec §3).
 *
 * Problems *in* an action (bad path, command not found, timeout) are data here,
 * exactly as OpenHands returns them, because the agent must read them; problems
 * with the runtime itself are typed errors (`errors.ts`).
 */
import { Schema } from "effect"
import { JsonObject, withDefault } from "./fields.ts"

/** Metadata of a shell command, parsed from the PS1 prompt (spec §3.1). */
export class CmdOutputMetadata extends Schema.Class<CmdOutputMetadata>("CmdOutputMetadata")({
  /** `-1` means "still running or unknown". */
  exitCode: withDefault(Schema.Int, -1),
  /** PID of the last background job (`$!`), `-1` when none. */
  pid: withDefault(Schema.Int, -1),
  username: withDefault(Schema.NullOr(Schema.String), null),
  hostname: withDefault(Schema.NullOr(Schema.String), null),
  workingDir: withDefault(Schema.NullOr(Schema.String), null),
  pyInterpreterPath: withDefault(Schema.NullOr(Schema.String), null),
  /** Text shown before the content (e.g. "[Below is the output of the previous command.]\n"). */
  prefix: withDefault(Schema.String, ""),
  /** Text shown after the content (e.g. "\n[The command completed with exit code 0.]"). */
  suffix: withDefault(Schema.String, "")
}) {}

/** Output of a shell command (`run`). */
export class CmdOutputObservation extends Schema.TaggedClass<CmdOutputObservation>()("CmdOutputObservation", {
  content: Schema.String,
  command: Schema.String,
  metadata: withDefault(CmdOutputMetadata, new CmdOutputMetadata({})),
  hidden: withDefault(Schema.Boolean, false)
}) {
  get exitCode(): number {
    return this.metadata.exitCode
  }
  get error(): boolean {
    return this.exitCode !== 0
  }
  get success(): boolean {
    return !this.error
  }
  get message(): string {
    return `Command \`${this.command}\` executed with exit code ${this.exitCode}.`
  }
  /** The text an agent is shown (OpenHands' `to_agent_observation`, spec §3.3). */
  get agentText(): string {
    const m = this.metadata
    let text = m.prefix + this.content + m.suffix
    if (m.workingDir) text += `\n[Current working directory: ${m.workingDir}]`
    if (m.pyInterpreterPath) text += `\n[Python interpreter: ${m.pyInterpreterPath}]`
    if (m.exitCode !== -1) text += `\n[Command finished with exit code ${m.exitCode}]`
    return text
  }
}

/** Output of an IPython cell (`run_ipython`). */
export class IPythonRunCellObservation
  extends Schema.TaggedClass<IPythonRunCellObservation>()("IPythonRunCellObservation", {
    content: Schema.String,
    code: Schema.String,
    /** Images the cell displayed, as `data:image/png;base64,...` URLs. */
    imageUrls: withDefault(Schema.NullOr(Schema.Array(Schema.String)), null)
  })
{
  get success(): boolean {
    return true
  }
  get message(): string {
    return "Code executed in IPython cell."
  }
}

/** Contents of a file (`read`). */
export class FileReadObservation extends Schema.TaggedClass<FileReadObservation>()("FileReadObservation", {
  content: Schema.String,
  path: Schema.String,
  implSource: withDefault(Schema.Literals(["default", "oh_aci"]), "default")
}) {
  get message(): string {
    return `I read the file ${this.path}.`
  }
}

/** A file was written (`write`); content is empty. */
export class FileWriteObservation extends Schema.TaggedClass<FileWriteObservation>()("FileWriteObservation", {
  content: withDefault(Schema.String, ""),
  path: Schema.String
}) {
  get message(): string {
    return `I wrote to the file ${this.path}.`
  }
}

/** Result of an editor command (`edit`): the editor's text plus a unified diff. */
export class FileEditObservation extends Schema.TaggedClass<FileEditObservation>()("FileEditObservation", {
  content: Schema.String,
  path: withDefault(Schema.String, ""),
  prevExist: withDefault(Schema.Boolean, false),
  /** As in OpenHands' server: the action's `old_str`, not the old file. */
  oldContent: withDefault(Schema.NullOr(Schema.String), null),
  /** As in OpenHands' server: the action's `new_str`, not the new file. */
  newContent: withDefault(Schema.NullOr(Schema.String), null),
  implSource: withDefault(Schema.Literals(["oh_aci", "llm_based_edit"]), "llm_based_edit"),
  /** Unified diff (no context lines) of the file before and after; "" for views and errors. */
  diff: withDefault(Schema.NullOr(Schema.String), null)
}) {
  get message(): string {
    return `I edited the file ${this.path}.`
  }
}

/** Something went wrong in the action; the agent reads `content`. */
export class ErrorObservation extends Schema.TaggedClass<ErrorObservation>()("ErrorObservation", {
  content: Schema.String,
  errorId: withDefault(Schema.String, "")
}) {
  get message(): string {
    return this.content
  }
}

/** State of the browser after `browse` / `browse_interactive`. */
export class BrowserOutputObservation
  extends Schema.TaggedClass<BrowserOutputObservation>()("BrowserOutputObservation", {
    content: Schema.String,
    url: Schema.String,
    triggerByAction: Schema.String,
    screenshot: withDefault(Schema.String, ""),
    screenshotPath: withDefault(Schema.NullOr(Schema.String), null),
    setOfMarks: withDefault(Schema.String, ""),
    error: withDefault(Schema.Boolean, false),
    goalImageUrls: withDefault(Schema.Array(Schema.Unknown), []),
    openPagesUrls: withDefault(Schema.Array(Schema.String), []),
    activePageIndex: withDefault(Schema.Int, -1),
    domObject: withDefault(JsonObject, {}),
    axtreeObject: withDefault(JsonObject, {}),
    extraElementProperties: withDefault(JsonObject, {}),
    lastBrowserAction: withDefault(Schema.String, ""),
    lastBrowserActionError: withDefault(Schema.String, ""),
    focusedElementBid: withDefault(Schema.String, ""),
    filterVisibleOnly: withDefault(Schema.Boolean, false)
  })
{
  get message(): string {
    return `Visited ${this.url}`
  }
}

/** Result of an MCP tool call; content is the JSON of the `CallToolResult`. */
export class McpObservation extends Schema.TaggedClass<McpObservation>()("McpObservation", {
  content: Schema.String,
  name: withDefault(Schema.String, ""),
  arguments: withDefault(JsonObject, {})
}) {
  get message(): string {
    return this.content
  }
}

/** A browser action downloaded a file into the workspace. */
export class FileDownloadObservation extends Schema.TaggedClass<FileDownloadObservation>()("FileDownloadObservation", {
  content: Schema.String,
  filePath: Schema.String
}) {
  get message(): string {
    return `Downloaded the file at location: ${this.filePath}`
  }
  override toString(): string {
    return `**FileDownloadObservation**\nLocation of downloaded file: ${this.filePath}\n`
  }
}

/** Every observation an action can produce. */
export const Observation = Schema.Union([
  CmdOutputObservation,
  IPythonRunCellObservation,
  FileReadObservation,
  FileWriteObservation,
  FileEditObservation,
  ErrorObservation,
  BrowserOutputObservation,
  McpObservation,
  FileDownloadObservation
]).pipe(Schema.toTaggedUnion("_tag"))
export type Observation = typeof Observation.Type
