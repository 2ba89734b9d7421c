/**
 * `effect-sandbox/runloop`: RunloopRuntime (a Runloop devbox through the official SDK), its warm
 * pool and the Dockerfile of the blueprint it starts from.
 *
 * A subpath of its own so that only its users install the SDK: `@runloop/api-client` is an
 * optional peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export { blueprintDockerfile } from "./layers/runloop/blueprint.ts"
export { RUNLOOP_RATE_LIMIT_RETRY } from "./layers/runloop/errors.ts"
export type { RunloopResources, RunloopSize } from "./layers/runloop/launch.ts"
export {
  DEFAULT_BLUEPRINT,
  RunloopDevboxPool,
  RunloopRuntime,
  type RunloopRuntimeOptions
} from "./layers/RunloopRuntime.ts"
