/**
 * The contract between a transport and the \`Runtime\` service: what the in-process executor, the
 * HTTP client and a test script each provide, and \`makeRuntime\` (runtime/makeRuntime.ts)
 * turns into a \`Runtime\`. A contract, so the client and every layer reach it without importing
 * a layer.
 */
import type { Effect, Option, Scope } from "effect"
import type { DraftEditor } from "../editor/draftEditor.ts"
import type { Action } from "../schema/Action.ts"
import type { InvalidEnvVarError, RuntimeError, TransferError, UnsupportedCapabilityError } from "../schema/errors.ts"
import type { McpTool } from "../schema/McpTool.ts"
import type { Observation } from "../schema/Observation.ts"
import type { RuntimeSnapshotError, Snapshot, SnapshotOptions } from "../schema/snapshot.ts"
import type { ProcessControl } from "./Processes.ts"
import type { RuntimeInfo, RuntimeShape, WhilePaused } from "./Runtime.ts"

/** What a transport must provide; `makeRuntime` adds the rest. */
export interface RuntimeBackend {
  readonly info: RuntimeInfo
  /** `SandboxConfig.timeout`: the hard timeout of actions that set none. */
  readonly defaultTimeoutSeconds: number
  /**
   * `onOutput` (from `runStream`) sees a command's output as it is printed, before the observation;
   * a backend that cannot stream ignores it and the observation alone ends the stream.
   */
  readonly execute: (action: Action, onOutput?: (text: string) => void) => Effect.Effect<Observation, RuntimeError>
  /** Sees each action exactly as the caller sent it, before the defaults (TestRuntime records it). */
  readonly received?: (action: Action) => Effect.Effect<void>
  readonly copyTo: (
    hostSource: string,
    sandboxDest: string,
    recursive: boolean
  ) => Effect.Effect<void, TransferError | RuntimeError>
  readonly copyFrom: (sandboxPath: string, hostZipPath: string) => Effect.Effect<void, TransferError | RuntimeError>
  readonly listFiles: (path?: string) => Effect.Effect<ReadonlyArray<string>, RuntimeError>
  readonly listTools: Effect.Effect<ReadonlyArray<McpTool>, RuntimeError>
  /** `secrets`: the names in `vars` given as `Redacted`, whose values the backend masks before truncating output. */
  readonly setEnv: (
    vars: Readonly<Record<string, string>>,
    secrets: ReadonlyArray<string>
  ) => Effect.Effect<void, InvalidEnvVarError | RuntimeError>
  readonly pause?: Effect.Effect<void, RuntimeError>
  /** From `captureDraftEditor` at build time; none: the backend answers `llm_based_edit` with its own error. */
  readonly draftEditor?: Option.Option<DraftEditor>
  readonly resume?: Effect.Effect<void, RuntimeError>
  /** What calls made while PAUSED do (default `"fail"`): see `WhilePaused`. */
  readonly whilePaused?: WhilePaused
  /** `Runtime.snapshot` (`info.capabilities.snapshot`); without it an unsupported capability. */
  readonly snapshot?: (
    options: SnapshotOptions
  ) => Effect.Effect<Snapshot, RuntimeSnapshotError | UnsupportedCapabilityError | RuntimeError>
  /** `Runtime.fork`, its count checked. */
  readonly fork?: (
    count: number
  ) => Effect.Effect<
    ReadonlyArray<RuntimeShape>,
    RuntimeSnapshotError | UnsupportedCapabilityError | RuntimeError,
    Scope.Scope
  >
  /** Background processes (`Runtime.spawn`), by id; without them `spawn` is an unsupported capability. */
  readonly processes?: ProcessControl<RuntimeError>
}
