/**
 * `effect-sandbox/e2b`: E2BRuntime and its warm pool.
 *
 * A subpath of its own so that only its users install its SDK: `e2b` is an optional peer
 * dependency, loaded when a layer is built, never by the root `effect-sandbox` (DESIGN.md
 * principle 11).
 */
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { E2BRuntime, type E2BRuntimeOptions, E2BSandboxPool } from "./providers/e2b/E2BRuntime.ts"
