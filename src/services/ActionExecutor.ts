/**
 * The `ActionExecutor` service: turns an action into an observation, and owns
 * the session's shell, editor, files and tools. It is written once; the CLI
 * runtime calls it in-process and the action server exposes it over HTTP.
 */
import { Context, type Effect } from "effect"
import type { FileViewError } from "../executor/files/viewFile.ts"
import type { McpStdioServer } from "../executor/mcp/McpHub.ts"
import type { Action } from "../schema/Action.ts"
import type { InvalidEnvVarError, RuntimeStartError, TransferError } from "../schema/errors.ts"
import type { McpTool } from "../schema/McpTool.ts"
import type { Observation } from "../schema/Observation.ts"
import type { ProcessControl } from "./Processes.ts"

export interface UploadRequest {
  /** A local file holding the payload (the file itself, or a zip). */
  readonly source: string
  /** Name of the uploaded file (`x.txt`, `tree.zip`). */
  readonly filename: string
  /** Directory in the sandbox; created if missing. */
  readonly destination: string
  /** The payload is a zip to extract (a `.zip` filename is extracted anyway, as in OpenHands). */
  readonly recursive: boolean
}

export interface ActionExecutorShape {
  /** The workspace directory as agents address it. */
  readonly workspace: string
  /**
   * Observations for every action; fails only when the shell cannot be (re)started.
   * `onOutput` receives a command's or an IPython cell's output as it is produced (other actions ignore it).
   */
  readonly execute: (action: Action, onOutput?: (text: string) => void) => Effect.Effect<Observation, RuntimeStartError>
  readonly upload: (request: UploadRequest) => Effect.Effect<void, TransferError>
  /** Write a zip of a sandbox file or directory to the local file `outFile`. */
  readonly download: (path: string, outFile: string) => Effect.Effect<void, TransferError>
  readonly listFiles: (path?: string) => Effect.Effect<ReadonlyArray<string>>
  /** A file's bytes for the file viewer, opened as file actions open files (rules and bounds). */
  readonly viewFile: (path: string) => Effect.Effect<Uint8Array, FileViewError>
  /** Replace the stdio MCP servers (OpenHands' /update_mcp_server); returns connection errors. */
  readonly setMcpServers: (servers: ReadonlyArray<McpStdioServer>) => Effect.Effect<ReadonlyArray<string>>
  /** The tools of every connected MCP server. */
  readonly listMcpTools: Effect.Effect<ReadonlyArray<McpTool>>
  /**
   * Waits for the IPython kernel's start (started in the background): why cells cannot run, or
   * undefined when they can or IPython was not asked for. A runtime reports it in its capabilities.
   */
  readonly ipythonUnavailable: Effect.Effect<string | undefined>
  /**
   * Export variables to the next command of every shell (and to shells started later); the values
   * of the names in `secrets` are masked in every observation from now on.
   */
  readonly setEnv: (
    vars: Readonly<Record<string, string>>,
    secrets?: ReadonlyArray<string>
  ) => Effect.Effect<void, InvalidEnvVarError>
  /** The session's background processes (`Runtime.spawn`), killed with the executor. */
  readonly processes: ProcessControl
  /**
   * Ends once the session's shell has printed its first prompt (at once unless the executor was
   * made with `shellStartsLater`); fails as the shell's start failed.
   */
  readonly started: Effect.Effect<void, RuntimeStartError>
}

export class ActionExecutor extends Context.Service<ActionExecutor, ActionExecutorShape>()(
  "effect-sandbox/ActionExecutor"
) {}
