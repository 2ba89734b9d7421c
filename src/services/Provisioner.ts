/**
 * The one contract every HTTP runtime implements (DESIGN.md: "one executor, two transports, many
 * provisioners"). A provisioner only gets an action server running and reachable, as a scoped
 * resource, and says what the transport needs to use it; everything else (the `/alive` wait, the
 * MCP hand-over, the capabilities the server reports, the status stream, the HTTP client, default
 * timeouts and schedules, `whilePaused`, the warm pool, `attach`) is done once by the builder in
 * provisioned/provisioned.ts. A child process (LocalRuntime), a container (DockerRuntime) and a
 * pod differ only here; docs/design-notes.md says what a new one implements.
 */
import type { Duration, Effect, Redacted, Scope } from "effect"
import type { HttpClient } from "effect/http"
import type { ServerErrorHook } from "../client/ActionClient.ts"
import type {
  InvalidOptionsError,
  RuntimeError,
  RuntimeStartError,
  UnsupportedCapabilityError
} from "../schema/errors.ts"
import type { RuntimeSnapshotError, Snapshot, SnapshotOptions } from "../schema/snapshot.ts"
import type { RuntimeCapabilities, RuntimeShape } from "./Runtime.ts"

/** The statuses a provisioner reports while it works (the builder sets the rest). */
export type ProvisionStatus = "BUILDING_RUNTIME"

/**
 * Why a sandbox stopped under its runtime, for the disconnect's message and the status: an
 * out-of-memory kill shows as ERROR_MEMORY, anything else as ERROR_RUNTIME_DISCONNECTED.
 */
export interface Disconnect {
  readonly message: string
  readonly outOfMemory: boolean
}

/** What a provisioner yields: a running server, not yet known to answer. */
export interface ProvisionedSandbox {
  /** `info.id`: the session id, which also labels what the provisioner started. */
  readonly id: string
  /** Where the client reaches the server (it may take a shorter route than `urls.actionServer`). */
  readonly baseUrl: string
  readonly sessionApiKey: Redacted.Redacted<string>
  /**
   * Headers every request to the server carries besides the session key: what the provider's
   * proxy in front of it asks for (Daytona's preview token). Secret, as the key is.
   */
  readonly headers?: Readonly<Record<string, Redacted.Redacted<string>>>
  /** The workspace as the sandbox sees it (`info.workspace`). */
  readonly workspace: string
  /** `info.urls` beyond `actionServer: baseUrl` (which they may replace with what users reach). */
  readonly urls?: Readonly<Record<string, string>>
  /** What the options claim; the builder removes what the server says cannot work. */
  readonly capabilities: RuntimeCapabilities
  /** How long the first `/alive` wait may take (default the client's, 120 s). */
  readonly aliveTimeout?: Duration.Input
  /** Fails when the server will never answer (its container exited), raced against the `/alive` wait. */
  readonly startFailure?: Effect.Effect<never, RuntimeStartError>
  /** Completes when the server says it listens (services/Driver.ts `Launched.listening`): the `/alive` wait begins then. */
  readonly listening?: Effect.Effect<void>
  /** Freeze and thaw the sandbox (`capabilities.pause`); the builder waits for `/alive` after `resume`. */
  readonly pause?: Effect.Effect<void, RuntimeError>
  readonly resume?: Effect.Effect<void, RuntimeError>
  /** A snapshot of the sandbox (`capabilities.snapshot`), removed with it unless kept. */
  readonly snapshot?: (
    options: SnapshotOptions
  ) => Effect.Effect<Snapshot, RuntimeSnapshotError | UnsupportedCapabilityError>
  /** `count` runtimes of the same layer started from one fresh snapshot, it and they in the calling scope. */
  readonly fork?: (
    count: number
  ) => Effect.Effect<
    ReadonlyArray<RuntimeShape>,
    RuntimeSnapshotError | UnsupportedCapabilityError | RuntimeError,
    Scope.Scope
  >
  /**
   * Following the sandbox after it is ready: `stopped` completes when it stops under the runtime,
   * `explain` says why (undefined while it runs).
   */
  readonly disconnect?: {
    readonly stopped: Effect.Effect<void>
    readonly explain: Effect.Effect<Disconnect | undefined>
  }
  /**
   * How the client reads the server's 404 and 5xx answers when a proxy before it gives them a
   * meaning (a remote runtime's 503 "paused": resume, then send again); default: disconnected.
   */
  readonly serverError?: ServerErrorHook
  /**
   * Run when the sandbox is handed to a runtime (at once, or when taken from a warm pool), in the
   * runtime's scope: what must live as long as the runtime (forwarding logs), and URLs that need
   * the answering server (VS Code's token). Gives more `info.urls`.
   */
  readonly handOver?: Effect.Effect<Readonly<Record<string, string>>, never, Scope.Scope | HttpClient.HttpClient>
}

/**
 * A provisioner: `kind` for `info.kind`, and `provision`, a scoped resource (closing its scope
 * stops and removes everything it made) that reports BUILDING_RUNTIME through `onStatus` when it
 * builds something first. Warm pools call it ahead of demand, each in its own scope.
 */
export interface Provisioner<R = never> {
  readonly kind: string
  readonly provision: (
    onStatus: (status: ProvisionStatus) => Effect.Effect<void>
  ) => Effect.Effect<ProvisionedSandbox, RuntimeStartError | InvalidOptionsError, Scope.Scope | R>
}
