/**
 * RemoteRuntime's policies, as values (DESIGN principle 3), with OpenHands' numbers (spec §9,
 * §14): how runtime-API calls are retried (the default `providerRetry`), how often a starting
 * runtime's pod is polled, the remote image build's waits (§14 `/build`) and the default budgets.
 * A layer's `schedules` option replaces the waits (a test polls in milliseconds; a slow cluster
 * may poll longer).
 */
import { Duration, Schedule } from "effect"
import type { RuntimeSchedules } from "../../client/policies.ts"

/**
 * RemoteRuntime's default `providerRetry`: runtime-API calls answered 429 or 5xx or lost on the
 * network, 3 attempts in all, waiting 4 s, then doubling, never more than 60 s (OpenHands'
 * `wait_exponential(min=4, max=60)`).
 */
export const apiRetrySchedule: Schedule.Schedule<Duration.Duration> = Schedule.min([
  Schedule.exponential("4 seconds", 2),
  Schedule.spaced("60 seconds")
]).pipe(Schedule.upTo({ times: 2 }))

/**
 * Action-server requests that never reached it (`enableRetries`): the same 3 attempts and waits
 * as the API's, which OpenHands' remote runtime uses for its network errors.
 */
export const actionServerRetrySchedule: Schedule.Schedule<Duration.Duration> = apiRetrySchedule

/** `GET /runtime/{id}` while the pod is not ready: every 2 s (OpenHands' `wait_fixed(2)`), until `aliveTimeout`. */
export const podStatusSchedule: Schedule.Schedule<number> = Schedule.spaced("2 seconds")

/**
 * `POST /build` still answered 429 once `providerRetry` gave up (the builder is busy): again after
 * 30 s (OpenHands' `sleep(30)`), bounded by the build budget.
 */
export const buildRetrySchedule: Schedule.Schedule<number> = Schedule.spaced("30 seconds")

/** `GET /build_status` while the build runs: every 30 s, until `BUILD_TIMEOUT`. */
export const buildStatusSchedule: Schedule.Schedule<number> = Schedule.spaced("30 seconds")

/** How long a remote build may take (OpenHands: 30 minutes). */
export const BUILD_TIMEOUT = Duration.minutes(30)

/** The runtime API OpenHands' `remote_runtime_api_url` defaults to. */
export const DEFAULT_API_URL = "http://localhost:8000"

/** Each runtime-API request's budget (`remote_runtime_api_timeout`). */
export const DEFAULT_API_TIMEOUT = Duration.seconds(180)

/**
 * The default `aliveTimeout`: how long a runtime may take to become ready, its pod then `/alive`
 * (`remote_runtime_init_timeout`).
 */
export const DEFAULT_ALIVE_TIMEOUT = Duration.seconds(180)

/** The action server's port inside a remote runtime (OpenHands' fixed 60000). */
export const ACTION_SERVER_PORT = 60000

/**
 * RemoteRuntime's replacements for its schedules: the HTTP transport's (`retry`, `waitUntilAlive`)
 * and its own waits, `podStatus` (polling a starting pod) and the build's.
 */
export interface RemoteSchedules extends RuntimeSchedules {
  readonly podStatus?: Schedule.Schedule<unknown>
  /** Re-sending `POST /build` answered 429, and polling `GET /build_status`. */
  readonly buildRetry?: Schedule.Schedule<unknown>
  readonly buildStatus?: Schedule.Schedule<unknown>
}
