/**
 * The driver contract: what a sandbox provider (a cloud's SDK, a container engine, a cluster)
 * says it can do, as a handful of verbs. One generic hosted runtime (src/hosted/) builds every
 * runtime layer from them, so what every provider needs the same way is written once: attach by
 * session id, release under `keepRuntimeAlive`, one owner-tag scheme and one reaper, the keep-alive
 * loop (which knows about pause), retries driven by the driver's classifier under one schedule,
 * the start failure's text, the disconnect watch, app ports and VS Code URLs, and the
 * `layer` / `layerPool` / `layerWarm` / `attach` shape. A driver only talks to its provider.
 *
 * The shape follows Effect's `HttpClient.make` (a client derived from one primitive) and
 * testcontainers (the container definition, the engine client, the wait strategy and one reaper
 * over one label scheme kept apart). docs/design-notes.md walks through one driver.
 */
import type { Config, Duration, Effect, Redacted, Scope } from "effect"
import type { ServerErrorHook } from "../client/ActionClient.ts"
import type { ParsedSecret } from "../network/edgeSecrets.ts"
import type { EgressPolicy } from "../network/policy.ts"
import type { InvalidOptionsError, ProviderError, ProviderReason, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import type { SnapshotKeeps } from "../schema/snapshot.ts"
import type { ProvisionStatus } from "./Provisioner.ts"

/** What a classifier makes of one failed provider call. */
export interface Classified {
  readonly reason: ProviderReason
  /** The HTTP (or gRPC mapped to HTTP) status, where the provider answered with one. */
  readonly status?: number | undefined
  /** The provider's own text, one line. */
  readonly text: string
  /** How long the provider asked us to wait before trying again (`Retry-After`). */
  readonly retryAfter?: Duration.Duration | undefined
}

/**
 * The one primitive a driver calls its provider with, given to it by the hosted runtime: the
 * promise's rejection classified by the driver's `classify`, a span named after `operation` with
 * the provider as an attribute, and retried under the runtime's one `providerRetry` schedule while
 * the reason is one worth waiting out (rate-limited, unavailable, a transition in progress).
 */
export type ProviderCall = <A>(operation: string, call: () => PromiseLike<A>) => Effect.Effect<A, ProviderError>

/**
 * How the action server is started inside a sandbox: the argv once the driver knows where Node
 * and the server's entry are (the image's, or a payload it uploaded), and the environment (the
 * sandbox's startup variables, the options' `env`, the tools', VS Code's port). The session key
 * is not in it: the driver delivers `spec.sessionKey` its own way (a file the server reads and
 * removes, or only its SHA-256), never in an environment a command could read.
 */
export interface ServerLaunch {
  readonly port: number
  readonly argv: (where: {
    readonly node: string
    readonly entry: string
    readonly workingDir: string
    /** Where the server listens (default all interfaces: the provider's proxy reaches it from outside). */
    readonly host?: string
    /** Another port than `port` (0: the OS picks one and the server announces it: Docker on the host's network). */
    readonly port?: number
    /** The lease file the server watches, stopping itself once it goes stale (Docker's owner lease). */
    readonly ownerLease?: string
  }) => Array<string>
  readonly env: Readonly<Record<string, string>>
}

/** What the hosted runtime asks a driver to make: one sandbox running the action server. */
export interface SandboxSpec {
  readonly sessionId: string
  readonly sessionKey: Redacted.Redacted<string>
  /**
   * The owner tags (src/hosted/ownerTags.ts), to be stored on the sandbox as the provider keeps
   * key/value pairs (labels, metadata, tags) and given back by `find`.
   */
  readonly tags: Readonly<Record<string, string>>
  /**
   * Released with its owner unless true (`SandboxConfig.keepRuntimeAlive`): then not removed on
   * release and not reaped; kept alive while a runtime uses it, ended by the provider's idle clock
   * (where it has one) only once none does.
   */
  readonly keepAlive: boolean
  readonly server: ServerLaunch
  /** The user the server and commands run as (the options', else the driver's `user`). */
  readonly user: { readonly name: string; readonly id: number }
  /** The ports besides the server's that must be reachable from outside (VS Code's, the app ports). */
  readonly ports: ReadonlyArray<number>
  readonly sandbox: SandboxConfig
  /** Report BUILDING_RUNTIME while the driver builds something first (an image). */
  readonly onStatus: (status: ProvisionStatus) => Effect.Effect<void>
  /**
   * Start from this snapshot (its id, as `snapshot.take` gave it) instead of the provider's image:
   * only given to a driver with `snapshot`.
   */
  readonly fromSnapshot?: string
}

/** How an action server exited before it answered (a start failure). */
export interface ServerExit {
  readonly exitCode: number
  /** Its last output (stdout and stderr); the runtime keeps the last 20 lines. */
  readonly output: string
}

/**
 * How a driver's making and starting can fail: a provider's refusal (from `ProviderCall`), or a
 * start error of its own (a template without the server, a missing SDK) that says what to do.
 */
export type DriverFailure = ProviderError | RuntimeStartError

/** A sandbox a driver made: its handle and the provider's id of it (for messages and logs). */
export interface Made<S> {
  readonly sandbox: S
  readonly id: string
  /**
   * The key the provider gave the server, where it sets one itself (a runtime API answers its own
   * `session_api_key`): the client sends it instead of `spec.sessionKey`.
   */
  readonly sessionKey?: Redacted.Redacted<string>
}

/** The action server started in a sandbox, with what the hosted runtime needs of it. */
export interface Launched {
  /** The workspace as the sandbox sees it (`info.workspace`). */
  readonly workspace: string
  /**
   * Completes when the server exits, with its exit code and last output; raced against the
   * `/alive` wait so that a server that dies at start fails the start at once, with its words.
   */
  readonly serverExit?: Effect.Effect<ServerExit, ProviderError>
  /** Run once the server answers: let go of what only the start needed (a command handle's buffers). */
  readonly started?: Effect.Effect<void>
  /**
   * Completes when the server says it listens (its `listening` line), or when the driver can no longer
   * tell: the `/alive` wait begins then, so its first attempt is answered instead of the poll, whose
   * steps grow to 250 ms, overshooting the server's boot.
   */
  readonly listening?: Effect.Effect<void>
}

/**
 * Where a sandbox is, as the provider reports it. `gone` says why, for the disconnect's message; an
 * out-of-memory end shows as ERROR_MEMORY.
 */
export type SandboxState =
  | { readonly _tag: "running" }
  | { readonly _tag: "paused" }
  | { readonly _tag: "stopped"; readonly why?: string }
  | {
    readonly _tag: "gone"
    /** The disconnect's message: a sentence naming the sandbox and, where known, why it ended. */
    readonly why: string
    readonly outOfMemory?: boolean
  }

/** A sandbox `find` listed: the handle, the provider's id, the tags it was made with, and its state. */
export interface Found<S> {
  readonly sandbox: S
  readonly id: string
  readonly tags: Readonly<Record<string, string>>
  readonly state: SandboxState["_tag"]
  /** The workspace as the sandbox sees it, where it is not the usual /workspace. */
  readonly workspace?: string
}

/** A snapshot a driver took or listed: the provider's id, the tags it was taken with, and when. */
export interface FoundSnapshot {
  readonly id: string
  readonly tags: Readonly<Record<string, string>>
  readonly createdAt: Date
}

/**
 * A provider's snapshots of its sandboxes (`Driver.snapshot`): taken with the owner tags
 * (src/hosted/ownerTags.ts `snapshotTags`), listed by them, removed by id. `create` starts a
 * sandbox from one when the spec names it (`SandboxSpec.fromSnapshot`). The hosted runtime makes
 * `Runtime.snapshot` and `fork` of these, removes a snapshot with its owner unless it is kept, and
 * reaps those of dead owners as it reaps sandboxes (unless the driver's own `reaper` does).
 */
export interface SnapshotVerbs<S> {
  /** What a sandbox started from a snapshot gets back. */
  readonly keeps: SnapshotKeeps
  /**
   * Why the provider will not snapshot this sandbox, or undefined where it will: such a sandbox's
   * `capabilities.snapshot` is false and `snapshot` fails at once saying this.
   */
  readonly refusal?: (sandbox: S) => string | undefined
  /**
   * Why this provider, as connected, takes no snapshots at all (a cluster without the API), or
   * undefined: then `capabilities.snapshot` is false, `snapshot` and `fork` fail at once with
   * `UnsupportedCapabilityError` saying this, and `fromSnapshot` is refused.
   */
  readonly unsupported?: string | undefined
  readonly take: (sandbox: S, tags: Readonly<Record<string, string>>) => Effect.Effect<FoundSnapshot, DriverFailure>
  /** Remove a snapshot; one that is gone already is no failure. */
  readonly remove: (id: string) => Effect.Effect<void, ProviderError>
  /** The snapshots whose tags include all of `tags`. */
  readonly find: (tags: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<FoundSnapshot>, ProviderError>
}

/** A URL that reaches a port of the sandbox, and the headers the provider's proxy asks for there. */
export interface Endpoint {
  readonly url: string
  /**
   * The URL users are shown (`info.urls.actionServer`) where the client takes a shorter route than
   * theirs (Docker's bridge address on a local engine, beside the port published on 127.0.0.1).
   */
  readonly shown?: string
  readonly headers?: Readonly<Record<string, Redacted.Redacted<string>>>
  /**
   * VS Code's only: what comes between `url` and the query (default `/`, the IDE at the root of its
   * host; `""` for OpenHands' path-mode `<api>/<runtime_id>/vscode?tkn=...` of a remote runtime).
   */
  readonly path?: "/" | ""
}

/**
 * A provider's driver, made once per layer or pool by `DriverDefinition.connect` (credentials read,
 * the SDK loaded, the app or image looked up). `S` is the driver's own handle of one sandbox.
 */
export interface Driver<S> {
  /** The user the provider's image runs the server as, unless the options name another. */
  readonly user: { readonly name: string; readonly id: number }
  /**
   * Make a sandbox (with `spec.tags`), not yet running the server unless the provider starts it
   * as the sandbox's own command. The hosted runtime destroys it on release (or on a failed start).
   */
  readonly create: (spec: SandboxSpec) => Effect.Effect<Made<S>, DriverFailure>
  /**
   * Start the action server in a sandbox `create` made (or in one `start` brought back), in the
   * current scope: deliver the session key, run `spec.server`; for a provider whose sandbox's
   * command is the server, only follow it.
   */
  readonly launch: (sandbox: S, spec: SandboxSpec) => Effect.Effect<Launched, DriverFailure, Scope.Scope>
  /** Remove the sandbox; one that is gone already is no failure. */
  readonly destroy: (sandbox: S) => Effect.Effect<void, ProviderError>
  /** The sandboxes whose tags include all of `tags` (attach looks up a session, the reaper an owner's host). */
  readonly find: (tags: Readonly<Record<string, string>>) => Effect.Effect<ReadonlyArray<Found<S>>, ProviderError>
  /**
   * Where the sandbox is now (the disconnect watch asks this). Absent: no watch, the provider's
   * proxy tells of a lost sandbox in its answers (Remote's runtime API, read by `serverError`).
   */
  readonly state?: (sandbox: S) => Effect.Effect<SandboxState, ProviderError>
  /**
   * Where a port of the sandbox is reached (`purpose` lets a provider sign VS Code's link apart), in
   * the calling scope: a provider reached through a listener of this process (a cluster's
   * port-forward) closes it with that scope.
   */
  readonly endpoint: (
    sandbox: S,
    port: number,
    purpose: "server" | "app" | "vscode"
  ) => Effect.Effect<Endpoint, ProviderError, Scope.Scope>
  /**
   * Completes when the sandbox stops under its runtime, for a provider that can follow it (a
   * cluster's watch); absent: the disconnect watch asks `state` every `watchEvery`.
   */
  readonly stopped?: (sandbox: S) => Effect.Effect<void>
  /**
   * More `info.urls` than the ports' (a cluster's service and ingress); `ide`: more bases VS Code is
   * opened from (`vscodeIngress`: an ingress's host), each given the owner's link's token and folder.
   */
  readonly urls?: (sandbox: S) => {
    readonly urls: Readonly<Record<string, string>>
    readonly ide?: Readonly<Record<string, string>>
  }
  /**
   * Start a stopped sandbox again (its memory, and so its server, are gone: `launch` follows);
   * absent: a stopped sandbox cannot be attached to.
   */
  readonly start?: (sandbox: S) => Effect.Effect<void, ProviderError>
  /**
   * Tell the provider the owner still wants the sandbox (renew a time-out, count as activity),
   * every `every`; skipped while paused. Absent: the provider ends nothing on its own.
   */
  readonly keepAlive?: {
    readonly every: Duration.Input
    readonly touch: (sandbox: S) => Effect.Effect<void, ProviderError>
  }
  /**
   * Freeze and thaw; `keepsMemory`: running processes survive (else only the files do).
   * `relaunch`: the server does not come back with the sandbox (Runloop's suspend keeps only the
   * disk), so the hosted runtime launches it again after `resume`; a provider that restarts the
   * server itself (Remote's runtime API recreates the pod) leaves it off.
   */
  readonly pause?: {
    readonly keepsMemory: boolean
    readonly relaunch?: boolean
    /**
     * Why the provider will refuse to pause this sandbox, or undefined where it pauses it (Daytona
     * pauses only some sandbox classes): such a sandbox's `capabilities.pause` is false, and its
     * pause and resume fail at once with a `RuntimePauseError` saying this, asking the provider
     * nothing. Absent: every sandbox of the provider pauses.
     */
    readonly refusal?: (sandbox: S) => string | undefined
    readonly pause: (sandbox: S) => Effect.Effect<void, ProviderError>
    readonly resume: (sandbox: S) => Effect.Effect<void, ProviderError>
  }
  /** Snapshots of a sandbox, and sandboxes started from them. Absent: the provider keeps none. */
  readonly snapshot?: SnapshotVerbs<S>
  /**
   * The workspace of a running sandbox `find` listed, where it depends on what the image holds
   * (Runloop's upload fallback runs in `~/workspace`); absent: `Found.workspace`, else /workspace.
   */
  readonly workspace?: (sandbox: S) => Effect.Effect<string, DriverFailure>
  /**
   * What release does to a sandbox kept alive (`keepRuntimeAlive`) instead of leaving it as it is:
   * Remote pauses it (OpenHands' `pause_closed_runtimes`), so it costs nothing until attached again.
   */
  readonly retain?: (sandbox: S) => Effect.Effect<void, ProviderError>
  /**
   * How the client reads the server's 404 and 5xx answers where the provider's proxy gives them a
   * meaning (Remote's 503 "paused": resumed, then the request sent again, when `keptAlive`).
   */
  readonly serverError?: (sandbox: S, keptAlive: boolean) => ServerErrorHook
  /**
   * The ports the provider itself exposes (Remote: its runtime API's work hosts), reported with
   * the options' `appPorts` as `info.urls["app-<port>"]`.
   */
  readonly exposedPorts?: (sandbox: S) => ReadonlyArray<number>
  /** The port the action server listens on in the sandbox (default 8000; Remote's API expects 60000). */
  readonly serverPort?: number
  /**
   * The driver's own owner-liveness pass, which the hosted reaper runs instead of the pid rule
   * (src/hosted/ownerTags.ts `ownerGone`), every `every` unless `reapEvery` says otherwise: for a
   * provider whose sandboxes the pid rule would misjudge (Docker: owners in other PID namespaces
   * with the host's name, labels anyone holding the socket can write; its lease says who lives).
   */
  readonly reaper?: {
    readonly every: Duration.Input
    readonly pass: Effect.Effect<unknown, ProviderError>
  }
  /** How long the first `/alive` wait may take (default 60 s). */
  readonly aliveTimeout?: Duration.Input
  /** How often the disconnect watch asks `state` (default 5 s). */
  readonly watchEvery?: Duration.Input
}

/**
 * A provider, as a runtime module declares it: its names, its classifier, and how a driver is
 * made from the options. `O` is the runtime's options (src/hosted/options.ts `HostedOptions` and the
 * provider's own).
 */
export interface DriverDefinition<O, S> {
  /** The provider's name in messages ("E2B", "Daytona"). */
  readonly provider: string
  /** The provider's word for a sandbox in messages (default "sandbox"; Runloop's "devbox"). */
  readonly sandboxNoun?: string
  /**
   * The sandbox mounts a directory of this machine as its workspace (Docker): the shared
   * `workspace` option applies. Otherwise it is refused (a directory here cannot reach the
   * provider's sandbox, and ignoring it would let a swapped-in layer work elsewhere).
   */
  readonly hostWorkspace?: boolean
  /**
   * The driver enforces the `network` option (src/network/policy.ts, docs/network.md): this refuses,
   * at start, each rule the provider cannot express. Absent, any policy is refused: a driver that
   * does not know the option never lets a restricted sandbox out unrestricted.
   */
  readonly network?: (policy: EgressPolicy) => Effect.Effect<void, InvalidOptionsError>
  /**
   * The driver puts the `secrets` option's values on requests at its sandbox's edge
   * (src/network/edgeSecrets.ts, docs/secrets.md), never inside the sandbox: this refuses, at start,
   * each form or host the provider cannot express. Absent, the option is refused: a driver that does
   * not know it must not put the value in the sandbox's environment.
   */
  readonly edgeSecrets?: (secrets: ReadonlyArray<ParsedSecret>) => Effect.Effect<void, InvalidOptionsError>
  /** `info.kind` ("e2b", "daytona"). */
  readonly kind: string
  /** What one failed call of this provider's SDK means. */
  readonly classify: (cause: unknown) => Classified
  /**
   * Read credentials (missing ones are an `InvalidOptionsError`), check the provider's own options,
   * load the SDK, look up what every sandbox shares; in the layer's scope.
   */
  readonly connect: (
    options: O,
    call: ProviderCall
  ) => Effect.Effect<Driver<S>, DriverFailure | InvalidOptionsError | Config.ConfigError, Scope.Scope>
}
