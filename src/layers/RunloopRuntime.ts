/**
 * RunloopRuntime: the action server in a Runloop devbox (a microVM), driven through the official
 * SDK (`@runloop/api-client`), reached through the devbox's authenticated tunnel.
 *
 * The devbox is created from a blueprint made from our runtime image (docs/runtimes/runloop.md;
 * a blueprint with only a Node gets the payload uploaded: runloop/upload.ts), with our metadata (session, owner, key: internal/ownerMetadata.ts), the server's environment,
 * its size, and an idle policy that shuts it down on Runloop's side once its owner stops sending
 * keep-alives (runloop/launch.ts); the reaper of any later runtime on the host shuts down a dead
 * owner's devboxes sooner (runloop/reaper.ts). The server is started through the command API with
 * its key written as a file (runloop/server.ts). pause/resume are Runloop's suspend and resume:
 * the disk is kept, memory and processes are not, so the server is started again on resume. A
 * devbox of a given session id that exists is attached to.
 */
import type { Runloop } from "@runloop/api-client"
import { type Config, Context, Duration, Effect, Layer, Redacted, type Schedule } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { RuntimeSchedules } from "../client/policies.ts"
import { sandboxTags, TAGS } from "../hosted/ownerTags.ts"
import { checkRuntimeOptions, refuseHostWorkspace, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import { InvalidOptionsError, type RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { serverCommand, serverEnv } from "../server/commandLine.ts"
import type { Disconnect, ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import type { Runtime, WhilePaused } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { pollDisconnect } from "./internal/disconnectPoll.ts"
import { headerRelay } from "./internal/headerRelay.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { toolCapabilities, VSCODE_PORT, vscodeEnv, vscodeUrls } from "./internal/serverTools.ts"
import { type RunloopClient, runloopClient } from "./runloop/client.ts"
import { managedDevboxes } from "./runloop/devboxes.ts"
import { RUNLOOP_RATE_LIMIT_RETRY, runloopCall } from "./runloop/errors.ts"
import { launchParameters, type RunloopResources } from "./runloop/launch.ts"
import { startReaper } from "./runloop/reaper.ts"
import {
  blueprintServer,
  type DevboxServer,
  launchServer,
  runningWorkspace,
  serverExited,
  sessionKeyFileEnv
} from "./runloop/server.ts"

/**
 * The shared options (services/RuntimeOptions.ts) and Runloop's own. `workspace` (a directory on
 * this machine) does not apply: the devbox has its own /workspace, filled with `copyTo`.
 */
export interface RunloopRuntimeOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The API key (default: `RUNLOOP_API_KEY`, read through Effect Config). */
  readonly apiKey?: Redacted.Redacted<string>
  /** The API endpoint (default `RUNLOOP_BASE_URL`, else `https://api.runloop.ai`). */
  readonly baseUrl?: string
  /** The blueprint made from the runtime image (default `effect-sandbox-runtime`). */
  readonly blueprint?: string
  /** The devbox user, who owns the workspace and runs the server (default Runloop's `user`, uid 1000). */
  readonly username?: string
  readonly userId?: number
  /**
   * When the blueprint lacks the payload but has a Node (22.19+) on its PATH, upload the payload
   * at each start and run it with that Node, the workspace then `~/workspace` (default true;
   * false: such a blueprint is a start error).
   */
  readonly uploadPayload?: boolean
  /** A named size or custom CPU, memory and disk (default: the blueprint's, else Runloop's). */
  readonly resources?: RunloopResources
  /**
   * How long without activity (the owner's keep-alives, tunnel traffic) before Runloop shuts the
   * devbox down (default 10 minutes; at most 48 hours). The owner sends a keep-alive every third of it.
   */
  readonly idleTimeout?: Duration.Input
  /**
   * The URL of a tunnel port (default `https://<port>-<key>.tunnel.<domain of baseUrl>`, as the
   * SDK's `getTunnelUrl` builds it); a proxy may map it elsewhere.
   */
  readonly tunnelUrl?: (port: number, tunnelKey: string) => string
  /**
   * Extra ports reported in `info.urls` as `app-<port>` (their tunnel URLs). With the shared
   * `vscode` option (a blueprint made from the tools image), `info.urls.vscode` is a relay on
   * 127.0.0.1 to the tunnel's port 8001 that adds the tunnel's token, which a browser cannot send.
   */
  readonly appPorts?: ReadonlyArray<number>
  /** How often the reaper looks for devboxes of dead owners on this host (default 60 s). */
  readonly reapEvery?: Duration.Input
  /** Retries of rate-limited calls (Runloop's 429; default `RUNLOOP_RATE_LIMIT_RETRY`). */
  readonly rateLimitRetry?: Schedule.Schedule<unknown>
  readonly schedules?: RuntimeSchedules
  readonly whilePaused?: WhilePaused
}

/** The blueprint RunloopRuntime starts from unless told otherwise (docs/runtimes/runloop.md makes it). */
export const DEFAULT_BLUEPRINT = "effect-sandbox-runtime"

const SERVER_PORT = 8000
/** The header Runloop's tunnel reads an authenticated tunnel's token from. */
const TUNNEL_AUTH_HEADER = "x-runloop-tunnel-authorization"
/** How often a running devbox is checked for having gone (shut down, failed). */
const GONE_CHECK_EVERY = "5 seconds"
/** How long a devbox may take to boot or resume, and to suspend. */
const BOOT_TIMEOUT_MS = 5 * 60_000

/** What one layer's devboxes share: the client, the options read once. */
interface RunloopContext {
  readonly client: RunloopClient
  readonly options: RunloopRuntimeOptions
  readonly sandbox: SandboxConfig
  readonly blueprint: string
  readonly username: string
  readonly userId: number
  readonly idleTimeout: Duration.Duration
  readonly retry: Schedule.Schedule<unknown>
}

/** The server's argv in the devbox (all interfaces: the tunnel reaches it from outside the VM). */
const argv = (ctx: RunloopContext, server: DevboxServer) =>
  serverCommand({
    node: server.node,
    entry: server.entry,
    port: SERVER_PORT,
    workingDir: server.workspace,
    host: "0.0.0.0",
    username: ctx.username,
    userId: ctx.userId,
    tools: ctx.options,
    restrictToWorkspace: restrictsToWorkspace(ctx.options)
  })

/** The SDK's tunnel URL: the API host without `api.`, under `tunnel.`. */
const defaultTunnelUrl = (baseUrl: string) => (port: number, key: string) => {
  const host = new URL(baseUrl).hostname
  return `https://${port}-${key}.tunnel.${host.startsWith("api.") ? host.slice(4) : host}`
}

/** Create a devbox of the blueprint, with our metadata, environment, tunnel and launch parameters. */
const createDevbox = (ctx: RunloopContext, sessionId: string, sessionKey: string) =>
  Effect.gen(function*() {
    const launch = yield* launchParameters({
      resources: ctx.options.resources,
      idleTimeout: ctx.idleTimeout,
      username: ctx.username,
      userId: ctx.userId
    })
    return yield* runloopCall(`create a devbox from blueprint ${ctx.blueprint}`, () =>
      ctx.client.api.devboxes.create({
        blueprint_name: ctx.blueprint,
        name: `effect-sandbox-${sessionId}`,
        metadata: sandboxTags({ sessionId, sessionKey, keepAlive: ctx.sandbox.keepRuntimeAlive }),
        environment_variables: serverEnv({
          env: startupEnv(ctx.sandbox, ctx.options),
          tools: ctx.options,
          sessionId,
          noChangeTimeoutSeconds: ctx.options.noChangeTimeoutSeconds ?? 10,
          extra: { ...sessionKeyFileEnv, ...vscodeEnv(ctx.options) }
        }),
        // Authenticated: the tunnel's token is a second secret besides the session key; its
        // traffic counts as activity for the idle policy.
        tunnel: { auth_mode: "authenticated", http_keep_alive: true },
        launch_parameters: launch
      }), ctx.retry)
  })

const shutdownDevbox = (ctx: RunloopContext, devboxId: string) =>
  runloopCall(`shut down devbox ${devboxId}`, () => ctx.client.api.devboxes.shutdown(devboxId), ctx.retry).pipe(
    Effect.catch((error) => Effect.logWarning(error.message))
  )

/** Wait (Runloop's long poll) until the devbox runs; a failed or shut-down one is a start error with its state. */
const awaitRunning = (ctx: RunloopContext, devboxId: string) =>
  runloopCall(
    `wait for devbox ${devboxId} to run`,
    () => ctx.client.api.devboxes.awaitRunning(devboxId, { longPoll: { timeoutMs: BOOT_TIMEOUT_MS } }),
    ctx.retry
  )

/** The devbox's tunnel (made on create; enabled now if Runloop has none for it). */
const tunnelOf = (ctx: RunloopContext, devbox: Runloop.DevboxView) =>
  devbox.tunnel !== undefined && devbox.tunnel !== null
    ? Effect.succeed(devbox.tunnel)
    : runloopCall(
      `enable the tunnel of devbox ${devbox.id}`,
      () => ctx.client.api.devboxes.enableTunnel(devbox.id, { auth_mode: "authenticated", http_keep_alive: true }),
      ctx.retry
    )

/**
 * Where a browser reaches VS Code: the tunnel's URL for its port when the tunnel is open, else (the
 * runtime's authenticated tunnel, whose token header a browser cannot send) a relay on 127.0.0.1
 * that adds the token (internal/headerRelay.ts), living with the runtime. The IDE then stays behind
 * the tunnel's authentication, as the server does, and is reached from this machine only, as on
 * Docker. A relay that cannot listen leaves the runtime without its IDE URL (logged).
 */
const vscodeBase = (url: string, headers: ProvisionedSandbox["headers"]) =>
  headers === undefined ? Effect.succeed(url) : headerRelay(url, headers).pipe(
    Effect.catch((error) =>
      Effect.as(Effect.logWarning(`RunloopRuntime: no VS Code relay: ${error.message}`), undefined)
    )
  )

/**
 * The disconnect watch: Runloop shut the devbox down (its idle policy, someone else) or it failed
 * (out of memory, out of disk), with Runloop's reason. A failed look-up is not taken for an answer.
 */
const followDevbox = (ctx: RunloopContext, devboxId: string) =>
  pollDisconnect(
    runloopCall(`look up devbox ${devboxId}`, () => ctx.client.api.devboxes.retrieve(devboxId), ctx.retry).pipe(
      Effect.map((devbox): Disconnect | undefined =>
        devbox.status === "shutdown" || devbox.status === "failure"
          ? {
            outOfMemory: devbox.failure_reason === "out_of_memory",
            message: `Runloop devbox ${devboxId} is ${devbox.status} (${
              devbox.failure_reason ?? devbox.shutdown_reason ?? "no reason given"
            })`
          }
          : undefined
      ),
      Effect.catch(() => Effect.succeed(undefined))
    ),
    GONE_CHECK_EVERY
  )

/**
 * Start the server of a devbox that runs without one (new, or resumed: memory is not kept).
 * Returns what follows its exit.
 */
const startServer = (ctx: RunloopContext, devboxId: string, sessionKey: string) =>
  Effect.gen(function*() {
    const server = yield* blueprintServer(ctx.client.api, devboxId, ctx.blueprint, ctx.options.uploadPayload ?? true)
    const launched = yield* launchServer(
      ctx.client.api,
      devboxId,
      { argv: argv(ctx, server), workspace: server.workspace },
      sessionKey
    )
    return { launched, workspace: server.workspace }
  })

/**
 * Create (or attach to) the devbox of a session, in the current scope, and start its server
 * (the builder waits for it to answer through the tunnel).
 */
const startDevbox = (ctx: RunloopContext) =>
  Effect.gen(function*() {
    const { api } = ctx.client
    const sessionId = ctx.options.sessionId ?? randomUUID()
    const [existing] = ctx.options.sessionId === undefined
      ? []
      : yield* managedDevboxes(api, { [TAGS.session]: sessionId }, ctx.retry)
    const release = (made: Runloop.DevboxView) =>
      ctx.sandbox.keepRuntimeAlive ? Effect.void : shutdownDevbox(ctx, made.id)
    // Acquired uninterruptibly with its release: a start interrupted mid-create still shuts down what Runloop made.
    const made = existing === undefined
      ? yield* Effect.acquireRelease(createDevbox(ctx, sessionId, randomBytes(24).toString("base64url")), release)
      : yield* Effect.acquireRelease(Effect.succeed(existing), release)
    const sessionKey = made.metadata[TAGS.sessionKey] ?? ""
    if (made.status === "suspended") {
      yield* runloopCall(`resume devbox ${made.id}`, () => api.devboxes.resume(made.id), ctx.retry)
    }
    const devbox = yield* awaitRunning(ctx, made.id)
    // The idle policy shuts the devbox down unless the owner shows activity: every third of it,
    // while running (a suspended devbox has no idle clock). From before the server starts, so a slow
    // start cannot outlast a short idle timeout.
    let suspended = false
    const keepAlive = runloopCall(`keep devbox ${devbox.id} alive`, () => api.devboxes.keepAlive(devbox.id), ctx.retry)
      .pipe(Effect.catch((error) => Effect.logWarning(error.message)))
    yield* Effect.suspend(() => suspended ? Effect.void : keepAlive).pipe(
      Effect.delay(Duration.divideUnsafe(ctx.idleTimeout, 3)),
      Effect.forever,
      Effect.forkScoped
    )

    // A running devbox found by its session has its server; a new or resumed one gets it started.
    const started = existing?.status === "running" ? undefined : yield* startServer(ctx, devbox.id, sessionKey)

    const tunnel = yield* tunnelOf(ctx, devbox)
    const tunnelUrl = ctx.options.tunnelUrl ?? defaultTunnelUrl(ctx.client.baseUrl)
    const baseUrl = tunnelUrl(SERVER_PORT, tunnel.tunnel_key)
    const headers = tunnel.auth_token === undefined || tunnel.auth_token === null
      ? undefined
      : { [TUNNEL_AUTH_HEADER]: Redacted.make(`Bearer ${tunnel.auth_token}`) }
    const sessionApiKey = Redacted.make(sessionKey)
    const workspace = started?.workspace ?? (yield* runningWorkspace(api, devbox.id))
    return {
      id: sessionId,
      baseUrl,
      ...(headers === undefined ? {} : { headers }),
      sessionApiKey,
      workspace,
      urls: Object.fromEntries((ctx.options.appPorts ?? []).map((p) => [`app-${p}`, tunnelUrl(p, tunnel.tunnel_key)])),
      capabilities: toolCapabilities(ctx.options, { pause: true }),
      aliveTimeout: "90 seconds",
      ...(started === undefined ? {} : { startFailure: serverExited(api, started.launched) }),
      disconnect: followDevbox(ctx, devbox.id),
      ...(ctx.options.vscode !== true ? {} : {
        handOver: Effect.flatMap(
          vscodeBase(tunnelUrl(VSCODE_PORT, tunnel.tunnel_key), headers),
          (base) => vscodeUrls(ctx.options, { baseUrl, sessionApiKey, workspace }, base)
        )
      }),
      pause: Effect.gen(function*() {
        yield* runloopCall(`suspend devbox ${devbox.id}`, () => api.devboxes.suspend(devbox.id), ctx.retry)
        yield* runloopCall(
          `wait for devbox ${devbox.id} to suspend`,
          () => api.devboxes.awaitSuspended(devbox.id, { longPoll: { timeoutMs: BOOT_TIMEOUT_MS } }),
          ctx.retry
        )
        suspended = true
      }),
      // The disk is back, memory is not: the server is started again (the builder then waits for it).
      resume: Effect.gen(function*() {
        yield* runloopCall(`resume devbox ${devbox.id}`, () => api.devboxes.resume(devbox.id), ctx.retry)
        yield* awaitRunning(ctx, devbox.id)
        suspended = false
        yield* startServer(ctx, devbox.id, sessionKey)
      })
    } satisfies ProvisionedSandbox
  })

/**
 * The Runloop provisioner for one layer or pool: the options checked, the SDK client and the
 * reaper, then a devbox per `provision`.
 */
const runloopProvisioner = (options: RunloopRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("RunloopRuntime options", options)
    yield* refuseHostWorkspace("RunloopRuntime", "a Runloop devbox", options)
    const idleTimeout = Duration.fromInputUnsafe(options.idleTimeout ?? "10 minutes")
    // Checked now, so bad options fail before anything is created or any key is needed.
    yield* launchParameters({ resources: options.resources, idleTimeout, username: "user", userId: 1000 })
    const client = yield* runloopClient({ apiKey: options.apiKey, baseUrl: options.baseUrl })
    const retry = options.rateLimitRetry ?? RUNLOOP_RATE_LIMIT_RETRY
    yield* startReaper(client.api, retry, options.reapEvery ?? "60 seconds")
    const ctx: RunloopContext = {
      client,
      options,
      sandbox,
      blueprint: options.blueprint ?? DEFAULT_BLUEPRINT,
      username: options.username ?? "user",
      userId: options.userId ?? 1000,
      idleTimeout,
      retry
    }
    return { kind: "runloop", provision: () => startDevbox(ctx) } satisfies Provisioner
  })

/** Warm Runloop devboxes waiting for a runtime. */
export class RunloopDevboxPool extends Context.Service<RunloopDevboxPool, ProvisionedPool>()(
  "effect-sandbox/RunloopDevboxPool"
) {}

export const RunloopRuntime = {
  /** A runtime in a Runloop devbox (created, or attached to by session id); shut down on release unless kept alive. */
  layer: (
    options: RunloopRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(options, runloopProvisioner(options)),

  /** Keep `warmDevboxes` devboxes started (server alive) in the background, for `layerWarm`. */
  layerPool: (
    options: RunloopRuntimeOptions & { readonly warmDevboxes: number }
  ): Layer.Layer<RunloopDevboxPool, RuntimeStartError | InvalidOptionsError | Config.ConfigError> => {
    // Pool members get fresh session ids; a fixed one would name one devbox only.
    const { sessionId: _, warmDevboxes, ...shared } = options
    return provisionedPoolLayer(RunloopDevboxPool, warmDevboxes, "Runloop devbox", shared, runloopProvisioner(shared))
  },

  /** A runtime on a devbox taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, RunloopDevboxPool> => warmLayer(RunloopDevboxPool, Effect.succeed)
} as const
