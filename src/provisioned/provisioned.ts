/**
 * The one builder that turns a provisioner (services/Provisioner.ts) into runtime layers: `layer`
 * (a sandbox of its own), a warm pool with `warmLayer` (ready sandboxes handed over at once), and
 * `connectLayer` (a server someone else runs). What every HTTP runtime does the same way is here
 * once: the status transitions, the `/alive` wait, the MCP hand-over, the capabilities the server
 * reports, the disconnect watch, the HTTP client with its default timeout and schedules,
 * pause/resume with `whilePaused`, and the draft editor. A provisioner only starts a server.
 */
import { type Config, type Context, type Duration, Effect, Exit, Layer, type Redacted, Scope } from "effect"
import { HttpClient } from "effect/http"
import { layerHttpClient, makeActionClient, waitUntilAlive, withServerHeaders } from "../client/ActionClient.ts"
import { DEFAULT_ALIVE_TIMEOUT, type RuntimeSchedules } from "../client/policies.ts"
import { captureDraftEditor } from "../editor/draftEditor.ts"
import type { McpStdioServer } from "../executor/mcp/McpHub.ts"
import { makeRuntime } from "../runtime/makeRuntime.ts"
import { startProgress } from "../runtime/startProgress.ts"
import { makeStatus, type StatusCell } from "../runtime/statusCell.ts"
import { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigOr } from "../schema/SandboxConfig.ts"
import { refreshVsCodeUrl, sendMcpServers, serverCapabilities, toolCapabilities } from "../serverStart/serverTools.ts"
import type { ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import { Runtime, type WhilePaused } from "../services/Runtime.ts"
import { reportStart } from "../services/StartProgress.ts"
import { makeWarmPool, type WarmPool } from "./warmPool.ts"

/** What the builder reads from a runtime's options (services/RuntimeOptions.ts and the HTTP runtimes' own). */
export interface ProvisionedOptions {
  readonly sandbox?: SandboxConfig | undefined
  readonly mcp?: { readonly stdio?: ReadonlyArray<McpStdioServer> | undefined } | undefined
  readonly schedules?: RuntimeSchedules | undefined
  readonly whilePaused?: WhilePaused | undefined
}

/** A provisioner made for one layer or pool (checking options, taking a lease, starting a reaper: in its scope). */
export type MakeProvisioner<R, E, RM> = (sandbox: SandboxConfig) => Effect.Effect<Provisioner<R>, E, Scope.Scope | RM>

/** How long a resumed sandbox's server may take to answer again. */
const RESUME_ALIVE_TIMEOUT: Duration.Input = "30 seconds"

/**
 * Provision a sandbox in the current scope and get it ready: RUNTIME_STARTED once it runs, then
 * its server answering (or its `startFailure`), the stdio MCP servers sent (on every start: a
 * restarted server has forgotten them), and the capabilities it says it has.
 */
const readySandbox = <R>(
  provisioner: Provisioner<R>,
  options: ProvisionedOptions,
  status: StatusCell | undefined
) =>
  Effect.gen(function*() {
    const box = yield* provisioner.provision((s) => status?.set(s) ?? Effect.void)
    if (status !== undefined) yield* status.set("RUNTIME_STARTED")
    yield* reportStart({ phase: "waiting-for-server", detail: `the action server at ${box.baseUrl}` })
    return yield* Effect.gen(function*() {
      const alive = waitUntilAlive(box.baseUrl, box.aliveTimeout, options.schedules?.waitUntilAlive).pipe(
        Effect.mapError((error) => new RuntimeStartError({ message: error.message, reason: "alive-timeout" })),
        // Polled from when the server says it listens, where the driver can tell; the wait's own budget still bounds it.
        (polled) =>
          box.listening === undefined
            ? polled
            : Effect.andThen(Effect.timeoutOption(box.listening, box.aliveTimeout ?? DEFAULT_ALIVE_TIMEOUT), polled)
      )
      yield* box.startFailure === undefined ? alive : Effect.raceFirst(alive, box.startFailure)
      yield* sendMcpServers(box.baseUrl, box.sessionApiKey, options.mcp?.stdio)
      const capabilities = yield* serverCapabilities(box.baseUrl, box.sessionApiKey, box.capabilities)
      return { ...box, capabilities } satisfies ProvisionedSandbox
    }).pipe(withServerHeaders(box.headers))
  })

/** A sandbox as `runtimeOn` takes it: an attached server may need no key. */
type Reachable = Omit<ProvisionedSandbox, "sessionApiKey"> & {
  readonly sessionApiKey: Redacted.Redacted<string> | undefined
}

/** A `Runtime` over a ready sandbox, in the current scope: its hand-over, the disconnect watch, the client. */
const runtimeOn = (
  box: Reachable,
  kind: string,
  options: ProvisionedOptions,
  sandbox: SandboxConfig,
  status: StatusCell
) =>
  Effect.gen(function*() {
    const handedOver = box.handOver === undefined ? {} : yield* box.handOver
    const { disconnect } = box
    let gone = false
    if (disconnect !== undefined) {
      // A sandbox that stops under us (killed, out of memory) shows at once, before any call fails.
      const watching = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(watching, Exit.void))
      yield* disconnect.stopped.pipe(
        Effect.tap(() => Effect.sync(() => gone = true)),
        Effect.andThen(disconnect.explain),
        Effect.flatMap((why) => status.set(why?.outOfMemory === true ? "ERROR_MEMORY" : "ERROR_RUNTIME_DISCONNECTED")),
        Effect.forkIn(watching)
      )
    }
    const httpClient = yield* HttpClient.HttpClient
    // The runtime's own record: a resume rewrites VS Code's URL in it (refreshVsCodeUrl).
    const urls: Record<string, string> = { actionServer: box.baseUrl, ...box.urls, ...handedOver }
    const backend = yield* makeActionClient({
      baseUrl: box.baseUrl,
      sessionApiKey: box.sessionApiKey,
      defaultTimeoutSeconds: sandbox.timeout,
      status,
      retrySchedule: options.schedules?.retry,
      sandboxGone: () => gone,
      serverError: box.serverError,
      ...(disconnect === undefined ? {} : { explainDisconnect: Effect.map(disconnect.explain, (why) => why?.message) }),
      info: {
        id: box.id,
        kind,
        workspace: box.workspace,
        urls,
        capabilities: box.capabilities
      }
    })
    return makeRuntime({
      ...backend,
      draftEditor: yield* captureDraftEditor,
      ...(box.pause === undefined ? {} : { pause: box.pause }),
      ...(box.snapshot === undefined ? {} : { snapshot: box.snapshot }),
      ...(box.fork === undefined ? {} : { fork: box.fork }),
      ...(box.resume === undefined ? {} : {
        resume: box.resume.pipe(
          Effect.andThen(waitUntilAlive(box.baseUrl, RESUME_ALIVE_TIMEOUT, options.schedules?.waitUntilAlive)),
          Effect.andThen(refreshVsCodeUrl(urls, box.baseUrl, box.sessionApiKey)),
          Effect.provideService(HttpClient.HttpClient, httpClient)
        )
      }),
      ...(options.whilePaused === undefined ? {} : { whilePaused: options.whilePaused })
    }, status)
  }).pipe(withServerHeaders(box.headers))

/** A sandbox ready for `runtimeOn`, with what its runtime is built with. */
interface ToHandOver {
  readonly box: Reachable
  readonly kind: string
  readonly options: ProvisionedOptions
  readonly sandbox: SandboxConfig
}

/**
 * The `Runtime` layer every way in shares: a status cell (STARTING_RUNTIME now, STOPPED on
 * release), a sandbox from `ready` in the layer's scope (its steps reported to the layer's
 * `StartProgress` listener), its runtime, then READY.
 */
const runtimeLayer = <E, R>(ready: (status: StatusCell) => Effect.Effect<ToHandOver, E, R>) =>
  Layer.effect(
    Runtime,
    Effect.gen(function*() {
      const status = yield* makeStatus
      const progress = yield* startProgress
      const { box, kind, options, sandbox } = yield* progress.during(ready(status))
      const runtime = yield* runtimeOn(box, kind, options, sandbox, status)
      yield* status.set("READY")
      yield* progress.report({ phase: "ready", detail: `${kind} sandbox ${box.id}` })
      return runtime
    })
  ).pipe(Layer.provide(layerHttpClient))

/** A runtime on a sandbox of its own: provisioned now, released with the layer. */
export const provisionedLayer = <R, E, RM>(
  options: ProvisionedOptions,
  make: MakeProvisioner<R, E, RM>
) =>
  runtimeLayer((status) =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxConfigOr(options.sandbox)
      const provisioner = yield* make(sandbox)
      const box = yield* readySandbox(provisioner, options, status)
      return { box, kind: provisioner.kind, options, sandbox }
    })
  )

/** A warm pool's service: ready sandboxes, and what their runtimes are built with. */
export interface ProvisionedPool {
  readonly kind: string
  readonly pool: WarmPool<ProvisionedSandbox>
  readonly options: ProvisionedOptions
  readonly sandbox: SandboxConfig
}

/**
 * The pool service `tag`: `size` sandboxes kept ready in the background (a failed start is logged
 * and retried), each handed to one runtime by `warmLayer` and released with it.
 */
export const provisionedPoolLayer = <I, R, E, RM>(
  tag: Context.Key<I, ProvisionedPool>,
  pool: {
    /** The runtime, for the refusal of a bad size (`LocalRuntime`). */
    readonly runtime: string
    readonly size: number
    /** One sandbox, for the pool's log lines ("local server"). */
    readonly what: string
  },
  options: ProvisionedOptions,
  make: MakeProvisioner<R, E, RM>
) =>
  Layer.effect(
    tag,
    Effect.gen(function*() {
      if (!(Number.isInteger(pool.size) && pool.size >= 1)) {
        // A pool of none would keep its layerWarm waiting forever.
        return yield* new InvalidOptionsError({ message: `${pool.runtime} options: poolSize must be 1 or more.` })
      }
      const sandbox = yield* sandboxConfigOr(options.sandbox)
      const provisioner = yield* make(sandbox)
      const warm = yield* makeWarmPool(pool.size, readySandbox(provisioner, options, undefined), pool.what)
      return { kind: provisioner.kind, pool: warm, options, sandbox } satisfies ProvisionedPool
    })
  ).pipe(Layer.provide(layerHttpClient))

/**
 * A runtime on a sandbox taken from the pool `tag` (ready at once when one is warm; the pool refills).
 * `sandbox` picks the configuration its runtime uses from the pool's.
 */
export const warmLayer = <I, S extends ProvisionedPool, E>(
  tag: Context.Key<I, S>,
  sandbox: (pooled: SandboxConfig) => Effect.Effect<SandboxConfig, E>
): Layer.Layer<Runtime, E, I> =>
  runtimeLayer(() =>
    Effect.gen(function*() {
      const pool = yield* tag
      const config = yield* sandbox(pool.sandbox)
      return { box: yield* pool.pool.take, kind: pool.kind, options: pool.options, sandbox: config }
    })
  )

/** Connecting to a server someone else runs: releasing the layer leaves it running. */
export interface ConnectOptions {
  readonly url: string
  readonly sessionApiKey?: Redacted.Redacted<string>
  /** The workspace as the server sees it (default `/workspace`). */
  readonly workspace?: string
  readonly sandbox?: SandboxConfig
  /** How long to wait for `/alive` (default 120 s). */
  readonly aliveTimeout?: Duration.Input
  readonly schedules?: RuntimeSchedules
}

/** A runtime on a running server (its tools unknown: none assumed), as `kind`. */
export const connectLayer = (
  kind: string,
  options: ConnectOptions
): Layer.Layer<Runtime, RuntimeStartError | Config.ConfigError> =>
  runtimeLayer(() =>
    Effect.gen(function*() {
      const sandbox = yield* sandboxConfigOr(options.sandbox)
      const baseUrl = options.url.replace(/\/+$/, "")
      yield* reportStart({ phase: "waiting-for-server", detail: `the action server at ${baseUrl}` })
      yield* waitUntilAlive(baseUrl, options.aliveTimeout, options.schedules?.waitUntilAlive)
      const box: Reachable = {
        id: baseUrl,
        baseUrl,
        sessionApiKey: options.sessionApiKey,
        workspace: options.workspace ?? "/workspace",
        capabilities: toolCapabilities({}, { pause: false })
      }
      return { box, kind, options, sandbox }
    })
  )
