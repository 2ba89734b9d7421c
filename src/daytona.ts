/**
 * `effect-sandbox/daytona`: DaytonaRuntime (a Daytona sandbox through the official SDK), its warm
 * pool and the Dockerfile of the snapshot it starts from.
 *
 * A subpath of its own so that only its users install the SDK: `@daytonaio/sdk` is an optional
 * peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { DaytonaRuntime, type DaytonaRuntimeOptions, DaytonaSandboxPool } from "./providers/daytona/DaytonaRuntime.ts"
export { DEFAULT_SNAPSHOT, snapshotDockerfile } from "./providers/daytona/options.ts"
