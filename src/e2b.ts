/**
 * `effect-sandbox/e2b`: E2BRuntime and its warm pool.
 *
 * A subpath of its own so that only its users install its SDK: `e2b` is an optional peer
 * dependency, loaded when a layer is built, never by the root `effect-sandbox` (DESIGN.md
 * principle 11).
 */
export { E2B_RATE_LIMIT_RETRY } from "./layers/e2b/rateLimit.ts"
export { E2BRuntime, type E2BRuntimeOptions, E2BSandboxPool } from "./layers/E2BRuntime.ts"
