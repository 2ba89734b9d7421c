/**
 * effect-sandbox: sandboxed execution runtimes for AI coding agents, on Effect 4.
 *
 * Program against `Runtime`; choose where actions run by providing one layer
 * (`CliRuntime.layer`, ... or `TestRuntime.layer` in tests).
 *
 * The root is the core: schemas, `Runtime`, errors, CliRuntime and TestRuntime. Every other
 * runtime is a subpath (`effect-sandbox/local`, `effect-sandbox/docker`, ...) whose SDK is an
 * optional peer dependency, so importing this module loads no runtime SDK and no native addon.
 */
export { aliveSchedule, retrySchedule, type RuntimeSchedules } from "./client/policies.ts"
export {
  type CommandOutcome,
  commandOutcome,
  editFailure,
  type KilledOnTimeout,
  runCommandKillOnTimeout,
  writtenText
} from "./client/semantics.ts"
export { DraftEditorSettings, type DraftEditorSettingsShape, type LintInput } from "./editor/draftEditor.ts"
export { DEFAULT_LIMITS, Limits, limitsFromEnv, type TransferLimits } from "./executor/limits.ts"
export { CliRuntime, type CliRuntimeOptions } from "./layers/CliRuntime.ts"
export {
  type FailingTestRuntimeOptions,
  MisscriptedStepError,
  type RecordedCopy,
  type ScriptedStep,
  StreamedStep,
  TestRuntime,
  type TestRuntimeOptions,
  UnscriptedActionError
} from "./layers/TestRuntime.ts"
export {
  type RecordedProcess,
  type ScriptedProcess,
  UnscriptedProcessError
} from "./layers/testRuntime/scriptedProcesses.ts"
export type { EdgeSecret } from "./network/edgeSecrets.ts"
export type { NetworkPolicy } from "./network/policy.ts"
export { ActionMetrics } from "./runtime/telemetry.ts"
export * from "./schema/Action.ts"
export * from "./schema/ActionEvent.ts"
export * from "./schema/cmdOutput.ts"
export * from "./schema/errors.ts"
export * from "./schema/McpTool.ts"
export * from "./schema/Observation.ts"
export * from "./schema/process.ts"
export * from "./schema/RuntimeStatus.ts"
export * from "./schema/SandboxConfig.ts"
export * from "./schema/snapshot.ts"
export * from "./schema/wire.ts"
export * from "./services/ActionExecutor.ts"
export type { EnvValue } from "./services/EnvValue.ts"
export * from "./services/Processes.ts"
export * from "./services/Runtime.ts"
export type * from "./services/RuntimeOptions.ts"
export {
  type StartPhase,
  StartProgress,
  type StartProgressEvent,
  type StartStep,
  statusOfPhase
} from "./services/StartProgress.ts"
export { DEFAULT_SERVICE_NAME, otlpLayerFromEnv } from "./telemetry/otlp.ts"
export * from "./workspace/errors.ts"
export { GitChange, gitChanges, GitDiff, gitDiff, workspaceBranch } from "./workspace/git.ts"
export { loadMicroagents, Microagent, type MicroagentOptions } from "./workspace/microagents.ts"
export * from "./workspace/setup.ts"
