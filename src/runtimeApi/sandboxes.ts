/**
 * What the runtime API asks of whatever runs its sandboxes (Docker today, Kubernetes next): the
 * Provisioner idea (services/Provisioner.ts) turned inside out. A Provisioner's sandbox lives in
 * its owner's scope; these outlive the request that made them and the API server itself, so the
 * backend keeps no state of its own: every answer is read back from the engine (container labels
 * and state, pod labels and phase), and a restarted API server, or another replica, sees the same.
 */
import { Context, type Effect, type Redacted } from "effect"
import type { ApiError } from "./errors.ts"
import type { StartRequest } from "./schemas.ts"

/** The action server's port inside every sandbox the API starts (OpenHands' remote runtime: 60000). */
export const SANDBOX_SERVER_PORT = 60000

/** The app ports published per sandbox (OpenHands tells agents to use 12000 and 12001): `work_hosts`. */
export const SANDBOX_APP_PORTS = [12000, 12001] as const

/** `/sessions/{sid}`'s `status`: what the engine says of the sandbox. */
export type SessionStatus = "running" | "paused" | "stopped"

/** `/runtime/{id}`'s `pod_status` (the values OpenHands' client acts on, lower-case). */
export type PodStatus = "pending" | "running" | "ready" | "paused" | "failed" | "crashloopbackoff" | "unknown"

export interface Sandbox {
  readonly runtimeId: string
  readonly sessionId: string
  readonly sessionApiKey: Redacted.Redacted<string>
  readonly status: SessionStatus
  /** The action server as reachable from the API server's host (undefined unless running or paused). */
  readonly serverUrl: string | undefined
  /** `work_hosts`: each published app port's URL and the port inside the sandbox. */
  readonly workHosts: Readonly<Record<string, number>>
  /**
   * VS Code's port (`VSCODE_PORT`, its token proxy) as reachable from the API server: only for a
   * sandbox started with the `vscode` plugin in proxy mode, and not while stopped. Undefined: the
   * proxy forwards nothing to the sandbox's IDE path (vscodeProxy.ts).
   */
  readonly vscodeUrl: string | undefined
  readonly image: string
  readonly createdAt: string
  readonly resourceFactor: number
}

export interface PodState {
  readonly podStatus: PodStatus
  readonly restartCount: number
  readonly restartReasons: ReadonlyArray<string>
  /**
   * The server's last output lines once it exited (a failed or crash-looping pod), answered as
   * `last_output` beside §14's fields: RemoteRuntime puts it in its start error, as every other
   * runtime gives a dying server's last words. Absent while it runs, or when the engine kept none.
   */
  readonly lastOutput?: string
}

export class Sandboxes extends Context.Service<Sandboxes, {
  /** Which engine (`docker`), for `/list` and logs. */
  readonly kind: string
  /**
   * Start a sandbox for the request, or answer the session's existing one (a paused one is resumed,
   * a stopped one replaced). Fails with 429 when `maxSandboxes` run already.
   */
  readonly start: (request: StartRequest) => Effect.Effect<Sandbox, ApiError>
  readonly bySession: (sessionId: string) => Effect.Effect<Sandbox | undefined, ApiError>
  readonly byRuntime: (runtimeId: string) => Effect.Effect<Sandbox | undefined, ApiError>
  readonly list: Effect.Effect<ReadonlyArray<Sandbox>, ApiError>
  /** The engine's view of the sandbox's health (readiness probed at its `/alive`). */
  readonly podState: (sandbox: Sandbox) => Effect.Effect<PodState, ApiError>
  readonly pause: (sandbox: Sandbox) => Effect.Effect<void, ApiError>
  readonly resume: (sandbox: Sandbox) => Effect.Effect<void, ApiError>
  /** Stop and remove: nothing of the sandbox remains. */
  readonly stop: (sandbox: Sandbox) => Effect.Effect<void, ApiError>
}>()("effect-sandbox/runtimeApi/Sandboxes") {}
