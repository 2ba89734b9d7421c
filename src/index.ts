/**
 * effect-sandbox: sandboxed execution runtimes for AI coding agents.
 */
export * from "./schema/Action.ts"
export * from "./schema/cmdOutput.ts"
export * from "./schema/errors.ts"
export * from "./schema/Observation.ts"
export * from "./schema/RuntimeStatus.ts"
export * from "./schema/SandboxConfig.ts"
export * from "./schema/wire.ts"
