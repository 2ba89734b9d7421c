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
export { DEFAULT_LIMITS, Limits, limitsFromEnv, type TransferLimits } from "./executor/limits.ts"
export { CliRuntime, type CliRuntimeOptions } from "./layers/CliRuntime.ts"
export { ActionMetrics } from "./layers/internal/telemetry.ts"
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
export type * from "./services/RuntimeOptions.ts"
