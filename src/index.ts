/**
 * effect-sandbox: sandboxed execution runtimes for AI coding agents, on Effect 4.
 *
 * Program against `Runtime`; choose where actions run by providing one layer
 * (`CliRuntime.layer`, ... or `TestRuntime.layer` in tests).
 */
export { DEFAULT_LIMITS, Limits, limitsFromEnv, type TransferLimits } from "./executor/limits.ts"
export { CliRuntime, type CliRuntimeOptions } from "./layers/CliRuntime.ts"
export { DockerEngine } from "./layers/docker/engine.ts"
export { ImageBuilder, type ImageOptions } from "./layers/docker/imageBuilder.ts"
export { DockerRuntime, type DockerRuntimeOptions, DockerSandboxPool } from "./layers/DockerRuntime.ts"
export { ActionMetrics } from "./layers/internal/telemetry.ts"
export {
  LocalRuntime,
  type LocalRuntimeOptions,
  type LocalServerOptions,
  LocalServerPool
} from "./layers/LocalRuntime.ts"
export {
  type FailingTestRuntimeOptions,
  type RecordedCopy,
  type ScriptedStep,
  TestRuntime,
  type TestRuntimeOptions,
  UnscriptedActionError
} from "./layers/TestRuntime.ts"
export * from "./schema/Action.ts"
export * from "./schema/cmdOutput.ts"
export * from "./schema/errors.ts"
export * from "./schema/McpTool.ts"
export * from "./schema/Observation.ts"
export * from "./schema/RuntimeStatus.ts"
export * from "./schema/SandboxConfig.ts"
export * from "./schema/wire.ts"
export * from "./services/ActionExecutor.ts"
export * from "./services/Runtime.ts"
