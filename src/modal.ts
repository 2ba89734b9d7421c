/**
 * `effect-sandbox/modal`: ModalRuntime (a Modal sandbox through the official SDK) and its warm pool.
 *
 * A subpath of its own so that only its users install its SDK: `modal` (0.11) is an optional peer
 * dependency, loaded when a layer is built, never by the root `effect-sandbox` (DESIGN.md
 * principle 11).
 */
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { ModalRuntime, type ModalRuntimeOptions, ModalSandboxPool } from "./providers/modal/ModalRuntime.ts"
