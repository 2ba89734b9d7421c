/**
 * `effect-sandbox/runloop`: RunloopRuntime (a Runloop devbox through the official SDK), its warm
 * pool and the Dockerfile of the blueprint it starts from.
 *
 * A subpath of its own so that only its users install the SDK: `@runloop/api-client` is an
 * optional peer dependency, loaded when a layer is built, never by the root `effect-sandbox`
 * (DESIGN.md principle 11).
 */
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { blueprintDockerfile, DEFAULT_BLUEPRINT } from "./providers/runloop/options.ts"
export {
  RunloopDevboxPool,
  RunloopRuntime,
  type RunloopRuntimeOptions,
  type RunloopSize
} from "./providers/runloop/RunloopRuntime.ts"
