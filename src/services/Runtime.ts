/**
 * The `Runtime` service: the one contract every runtime layer provides
 * (CliRuntime, LocalRuntime, DockerRuntime, ... and TestRuntime). Code written
 * against it runs unchanged wherever the layer puts the sandbox.
 */
import { Context, type Effect, type Scope, type Stream } from "effect"
import type {
  Action,
  BrowseInteractiveAction,
  BrowseURLAction,
  CmdRunAction,
  FileEditAction,
  FileReadAction,
  FileWriteAction,
  IPythonRunCellAction,
  McpCallAction
} from "../schema/Action.ts"
import type { ActionEvent } from "../schema/ActionEvent.ts"
import type {
  InvalidEnvVarError,
  InvalidOptionsError,
  RuntimeError,
  TransferError,
  UnsupportedCapabilityError
} from "../schema/errors.ts"
import type { McpTool } from "../schema/McpTool.ts"
import type {
  BrowserOutputObservation,
  CmdOutputObservation,
  ErrorObservation,
  FileDownloadObservation,
  FileEditObservation,
  FileReadObservation,
  FileWriteObservation,
  IPythonRunCellObservation,
  McpObservation,
  Observation
} from "../schema/Observation.ts"
import type { ProcessError } from "../schema/process.ts"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"
import type { RuntimeSnapshotError, Snapshot, SnapshotOptions } from "../schema/snapshot.ts"
import type { EnvValue } from "./EnvValue.ts"
import type { ProcessHandle, SpawnOptions } from "./Processes.ts"

/** What a runtime can do beyond the actions every runtime answers. */
export interface RuntimeCapabilities {
  readonly pause: boolean
  readonly ipython: boolean
  readonly browser: boolean
  readonly mcp: boolean
  /** `snapshot` and `fork` (docs/snapshots.md says what each runtime keeps). */
  readonly snapshot: boolean
  /** Why a capability the options asked for is false (`ipython`: the kernel could not start, and how it failed). */
  readonly unavailable?: Readonly<Partial<Record<"pause" | "ipython" | "browser" | "mcp" | "snapshot", string>>>
}

/** Where a runtime lives. */
export interface RuntimeInfo {
  /** The session id; also labels every process or container the runtime starts. */
  readonly id: string
  /** `cli`, `local`, `docker`, ... */
  readonly kind: string
  /** The workspace directory as the sandbox sees it. */
  readonly workspace: string
  /** Reachable URLs (action server, app ports), by name. */
  readonly urls: Readonly<Record<string, string>>
  readonly capabilities: RuntimeCapabilities
}

/**
 * What a call made while the runtime is paused (status PAUSED) does: `"fail"` at once with
 * `RuntimePausedError` (nothing is sent), or `"wait"` for `resume` and then run (its own timeout
 * starts then). Without it a frozen sandbox held every call until a transport timeout that is not
 * the action's own. A layer option of the runtimes that can pause (and TestRuntime).
 */
export type WhilePaused = "fail" | "wait"

/**
 * An action's fields as a plain object (what its constructor takes). The shortcuts that accept one
 * check it as the constructor would, but a bad field is a typed `InvalidOptionsError` naming it
 * (`Invalid FileWriteAction: start: Expected an integer...`), not an exception thrown by `new`.
 */
export type ActionFields<C extends abstract new(...args: any) => any> = ConstructorParameters<C>[0]

export interface RuntimeShape {
  readonly info: RuntimeInfo
  /** The current status, then every change (OpenHands' RuntimeStatus values). */
  readonly status: Stream.Stream<RuntimeStatus>
  readonly currentStatus: Effect.Effect<RuntimeStatus>
  /**
   * Publish a status from outside the layer, as OpenHands' `set_runtime_status` (the workspace
   * set-up steps announce SETTING_UP_WORKSPACE, ...). STOPPED stays the layer's own: it means released.
   */
  readonly setStatus: (status: Exclude<RuntimeStatus, "STOPPED">) => Effect.Effect<void>
  /**
   * Run any action. Problems in the action come back as observations (an
   * `ErrorObservation`, or an exit code); only problems with the runtime fail.
   * Without a `timeout` the action gets `SandboxConfig.timeout` (120 s), non-blocking.
   * Interrupting the returned effect stops what the action started.
   */
  readonly run: (action: Action) => Effect.Effect<Observation, RuntimeError>
  /**
   * `run`, with a command's or an IPython cell's output as it is printed: `Output` chunks (a
   * command's raw terminal text; secrets masked), then the `Observation`, last. Other actions give
   * the observation alone. Interrupting the stream's consumer stops the action as `run`'s does.
   */
  readonly runStream: (action: Action) => Stream.Stream<ActionEvent, RuntimeError>
  /**
   * Run a shell command: its output and exit code (`exitCode`), or an `ErrorObservation` (the
   * action could not run: bad cwd, a command still running, ...). Both are observations, not
   * failures, on purpose: the error is the agent's to read (its `content` goes back to the model
   * as OpenHands' does), while the failure channel is kept for the runtime itself (`RuntimeError`),
   * which an agent loop handles differently (retry, new runtime). Tell them apart by `_tag`:
   * `Match.valueTags(observation, { CmdOutputObservation: ..., ErrorObservation: ... })` or
   * `observation instanceof ErrorObservation`. Any other observation from a server is turned into
   * an `ErrorObservation` saying so, so the type is true.
   */
  readonly runCommand: (
    command: string | CmdRunAction | ActionFields<typeof CmdRunAction>
  ) => Effect.Effect<CmdOutputObservation | ErrorObservation, RuntimeError | InvalidOptionsError>
  readonly runIPython: (
    code: string | IPythonRunCellAction
  ) => Effect.Effect<IPythonRunCellObservation | ErrorObservation, RuntimeError>
  readonly read: (path: string | FileReadAction) => Effect.Effect<FileReadObservation | ErrorObservation, RuntimeError>
  readonly write: (
    file: FileWriteAction | ActionFields<typeof FileWriteAction>
  ) => Effect.Effect<FileWriteObservation | ErrorObservation, RuntimeError | InvalidOptionsError>
  readonly edit: (
    action: FileEditAction | ActionFields<typeof FileEditAction>
  ) => Effect.Effect<FileEditObservation | ErrorObservation, RuntimeError | InvalidOptionsError>
  readonly browse: (
    url: string | BrowseURLAction
  ) => Effect.Effect<BrowserOutputObservation | FileDownloadObservation | ErrorObservation, RuntimeError>
  readonly browseInteractive: (
    actions: string | BrowseInteractiveAction
  ) => Effect.Effect<BrowserOutputObservation | FileDownloadObservation | ErrorObservation, RuntimeError>
  readonly callTool: (
    call: McpCallAction | { readonly name: string; readonly arguments?: Record<string, unknown> }
  ) => Effect.Effect<McpObservation | ErrorObservation, RuntimeError>
  /** The tools `callTool` can reach: every connected MCP server's, with its name (`[]` when none). */
  readonly listTools: Effect.Effect<ReadonlyArray<McpTool>, RuntimeError>
  /**
   * Copy a host file or directory into the sandbox directory `sandboxDest`
   * (created if missing). A file lands at `<sandboxDest>/<basename>`; with
   * `recursive` a directory keeps its own name: `<sandboxDest>/<dirname>/...`.
   */
  readonly copyTo: (
    hostSource: string,
    sandboxDest: string,
    options?: { readonly recursive?: boolean }
  ) => Effect.Effect<void, TransferError | RuntimeError>
  /** Write a zip of a sandbox file or directory to `hostZipPath` (entries relative to a directory). */
  readonly copyFrom: (sandboxPath: string, hostZipPath: string) => Effect.Effect<void, TransferError | RuntimeError>
  /** Names in a sandbox directory (default: the workspace); directories end in `/`, listed first. */
  readonly listFiles: (path?: string) => Effect.Effect<ReadonlyArray<string>, RuntimeError>
  /** Export variables to every later command (and later shells); `Redacted` values are masked in output. */
  readonly addEnvVars: (
    vars: Readonly<Record<string, EnvValue>>
  ) => Effect.Effect<void, InvalidEnvVarError | RuntimeError>
  /** Freeze the sandbox, keeping its state (runtimes with `capabilities.pause`). */
  readonly pause: Effect.Effect<void, UnsupportedCapabilityError | RuntimeError>
  readonly resume: Effect.Effect<void, UnsupportedCapabilityError | RuntimeError>
  /**
   * A snapshot of the sandbox (`capabilities.snapshot`): its files (and memory, where the provider
   * keeps it: `keeps`), from which new runtimes start with the layer option `fromSnapshot`. Removed
   * when this runtime is released, and reaped if its owner dies, unless `keep: true`.
   */
  readonly snapshot: (
    options?: SnapshotOptions
  ) => Effect.Effect<Snapshot, RuntimeSnapshotError | UnsupportedCapabilityError | RuntimeError>
  /**
   * `count` new runtimes of the same layer, each started from one fresh snapshot of this one: same
   * files, then each its own. They and the snapshot live in the calling scope (the snapshot is
   * removed after them). Agents that search (try N fixes from one state) start here.
   */
  readonly fork: (
    count: number
  ) => Effect.Effect<
    ReadonlyArray<RuntimeShape>,
    RuntimeSnapshotError | UnsupportedCapabilityError | InvalidOptionsError | RuntimeError,
    Scope.Scope
  >
  /**
   * Start `bash -c <command>` in the background (E2B's `commands.run({ background: true })`): a
   * handle to its output, stdin, signals and exit. Closing the scope kills the process and
   * everything it started. A session holds at most `EFFECT_SANDBOX_MAX_PROCESSES` (16) at once.
   */
  readonly spawn: (
    command: string,
    options?: SpawnOptions
  ) => Effect.Effect<
    ProcessHandle<RuntimeError>,
    ProcessError | InvalidEnvVarError | UnsupportedCapabilityError | RuntimeError,
    Scope.Scope
  >
}

export class Runtime extends Context.Service<Runtime, RuntimeShape>()("effect-sandbox/Runtime") {}
