/**
 * `effect-sandbox/remote`: RemoteRuntime, the client of a runtime API (OpenHands' remote runtime
 * API, spec §14) that runs sandboxes elsewhere, and its policies. A subpath of its own, as each
 * provisioner's (DESIGN.md principle 11).
 */
export { type StartRequest } from "./layers/remote/api.ts"
export { podFailure } from "./layers/remote/podReadiness.ts"
export * from "./layers/remote/policies.ts"
export { MISSING_API_KEY, RemoteRuntime, type RemoteRuntimeOptions, startRequest } from "./layers/RemoteRuntime.ts"
