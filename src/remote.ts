/**
 * `effect-sandbox/remote`: RemoteRuntime, the client of a runtime API (OpenHands' remote runtime
 * API, spec §14) that runs sandboxes elsewhere, and its policies. A subpath of its own, as each
 * provisioner's (DESIGN.md principle 11).
 */
export { type StartRequest } from "./layers/remote/api.ts"
export { podFailure } from "./layers/remote/podReadiness.ts"
export {
  ACTION_SERVER_PORT,
  actionServerRetrySchedule,
  apiRetrySchedule,
  DEFAULT_API_TIMEOUT,
  DEFAULT_API_URL,
  DEFAULT_INIT_TIMEOUT,
  podStatusSchedule,
  type RemoteSchedules
} from "./layers/remote/policies.ts"
export { MISSING_API_KEY, RemoteRuntime, type RemoteRuntimeOptions, startRequest } from "./layers/RemoteRuntime.ts"
