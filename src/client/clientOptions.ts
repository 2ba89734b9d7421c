/**
 * What a provisioner tells the HTTP transport about its server: where it is, its key, and how to
 * read its failures (a lost sandbox, a proxy's 503). `ActionClient.ts` re-exports these.
 */
import type { Duration, Effect, Redacted, Schedule } from "effect"
import type { StatusCell } from "../runtime/statusCell.ts"
import type { RuntimeInfo } from "../services/Runtime.ts"

export interface ActionClientOptions {
  /** e.g. `http://127.0.0.1:41237` */
  readonly baseUrl: string
  readonly sessionApiKey?: Redacted.Redacted<string> | undefined
  readonly info: RuntimeInfo
  readonly defaultTimeoutSeconds: number
  readonly status: StatusCell
  /** How long to wait for `/alive` (default 120 s). */
  readonly aliveTimeout?: Duration.Input
  /** What the provisioner knows about a lost server (e.g. "killed for exceeding its memory limit"). */
  readonly explainDisconnect?: Effect.Effect<string | undefined>
  /** Re-sends of requests that never reached a handler (default `retrySchedule`). */
  readonly retrySchedule?: Schedule.Schedule<unknown> | undefined
  /**
   * True once the provisioner saw the sandbox stop. Nothing is sent after that, retries
   * included: a container's bridge IP or a pod's IP is handed to the next sandbox that starts,
   * which would otherwise receive this session's key with the next request.
   */
  readonly sandboxGone?: () => boolean
  /**
   * The provisioner's reading of a 404 or 5xx answer, where a proxy before the server means more
   * than "gone" (a remote runtime's 503: paused). Undefined keeps the default disconnect.
   */
  readonly serverError?: ServerErrorHook | undefined
}

/** What a `ServerErrorHook` decides: send the request again (once), or disconnect with this message. */
export type ServerErrorVerdict =
  | { readonly _tag: "Retry" }
  | { readonly _tag: "Disconnected"; readonly message: string }

/**
 * Read a 404 or 5xx answer: `status`, the answer's `detail`, and whether this request was already
 * sent again after a `Retry` (a second `Retry` is not honoured).
 */
export type ServerErrorHook = (answer: {
  readonly status: number
  readonly detail: string
  readonly retried: boolean
}) => Effect.Effect<ServerErrorVerdict | undefined>
