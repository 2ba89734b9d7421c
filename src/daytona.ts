/**
 * `effect-sandbox/daytona`: DaytonaRuntime (a Daytona sandbox through the official SDK), its warm
 * pool and the Dockerfile of the snapshot it starts from.
 *
 * A subpath of its own so that only its users install the SDK: `@daytonaio/sdk` is an optional
 * peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export { snapshotDockerfile } from "./layers/daytona/snapshot.ts"
export {
  DaytonaRuntime,
  type DaytonaRuntimeOptions,
  DaytonaSandboxPool,
  DEFAULT_SNAPSHOT
} from "./layers/DaytonaRuntime.ts"
