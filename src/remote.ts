/**
 * `effect-sandbox/remote`: RemoteRuntime, the client of a runtime API (OpenHands' remote runtime
 * API, spec §14) that runs sandboxes elsewhere, its warm pool, and its policies. A subpath of its
 * own, as each provider's (DESIGN.md principle 11).
 */
export { PROVIDER_RETRY } from "./hosted/options.ts"
export { type StartRequest } from "./providers/remote/api.ts"
export { remoteVsCodeBase, startRequest } from "./providers/remote/driver.ts"
export { podFailure } from "./providers/remote/podReadiness.ts"
export * from "./providers/remote/policies.ts"
export { RemoteRuntime, type RemoteRuntimeOptions, RemoteRuntimePool } from "./providers/remote/RemoteRuntime.ts"
