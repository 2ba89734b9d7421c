/**
 * DaytonaRuntime: the action server in a Daytona sandbox, driven through the official SDK
 * (`@daytonaio/sdk`), reached through the sandbox's preview link with its token.
 *
 * The sandbox is created from a snapshot made from our runtime image (docs/runtimes/daytona.md),
 * labelled with its session and owner, with auto-stop and auto-delete intervals so Daytona
 * removes it when its owner dies; the owner's heartbeat label (daytona/heartbeat.ts) lets the
 * reaper of any later runtime delete it sooner. The server is started through the toolbox with
 * its key uploaded as a file (daytona/server.ts). pause/resume are Daytona's pause (memory kept,
 * processes frozen) and start. A sandbox of a given session id that exists is attached to.
 * VS Code, which a browser opens without the preview token's header, gets a signed preview link
 * (daytona/vscodeLink.ts).
 */
import type { Daytona, Sandbox } from "@daytonaio/sdk"
import { type Config, Context, type Duration, Effect, Layer, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { RuntimeSchedules } from "../client/policies.ts"
import { checkRuntimeOptions, refuseHostWorkspace, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { serverCommand, serverEnv } from "../server/commandLine.ts"
import type { ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import type { Runtime, WhilePaused } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { daytonaClient, type DaytonaConnection } from "./daytona/client.ts"
import { daytonaCall } from "./daytona/errors.ts"
import { heartbeatLabels, startHeartbeat } from "./daytona/heartbeat.ts"
import { type HeartbeatOptions, LABEL, ownerLabels } from "./daytona/labels.ts"
import { startReaper } from "./daytona/reaper.ts"
import { launchServer, serverExited, sessionKeyFileEnv } from "./daytona/server.ts"
import { runningWorkspace, type ServerFiles, snapshotServer, uploadedServer } from "./daytona/serverFiles.ts"
import { vscodeLink, vscodeLinkSeconds } from "./daytona/vscodeLink.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { toolCapabilities, vscodeEnv, vscodeUrls } from "./internal/serverTools.ts"

/**
 * The shared options (services/RuntimeOptions.ts), where to reach Daytona, and what is a Daytona
 * sandbox's own. `workspace` (a host directory) does not apply: the workspace is `/workspace`
 * in the sandbox.
 */
export interface DaytonaRuntimeOptions extends RuntimeOptions {
  /** The API key (default `DAYTONA_API_KEY`, read through Effect `Config`). */
  readonly apiKey?: Redacted.Redacted<string>
  /** The API endpoint (default `DAYTONA_API_URL`, else `https://app.daytona.io/api`). */
  readonly apiUrl?: string
  /** The region (default `DAYTONA_TARGET`, else the organisation's default). */
  readonly target?: string
  /** The snapshot made from the runtime image (default `effect-sandbox-runtime`). */
  readonly snapshot?: string
  /**
   * Where the action server comes from: `"snapshot"` (default), the snapshot made from the runtime
   * image; `"upload"`, uploaded at each start into a snapshot whose image has Node (>= 22.19) on
   * PATH, the workspace then `~/workspace` (slower to start, and the server's files are the
   * sandbox user's: docs/runtimes/daytona.md).
   */
  readonly server?: "snapshot" | "upload"
  /**
   * The sandbox user, who owns the workspace and runs the server (default `openhands`, uid 1000, made
   * by the snapshot's Dockerfile; Daytona runs it under Sysbox, whose user namespace maps it to host ids of its own).
   */
  readonly username?: string
  readonly userId?: number
  /** Minutes without activity before Daytona stops the sandbox (default 15; 0 never: then only the reaper removes orphans). */
  readonly autoStopMinutes?: number
  /** Minutes a stopped sandbox is kept before Daytona deletes it (default 0: at once). */
  readonly autoDeleteMinutes?: number
  /** Extra ports reported in `info.urls` as `app-<port>` (their preview links). */
  readonly appPorts?: ReadonlyArray<number>
  /**
   * VS Code (services/RuntimeOptions.ts), in a snapshot that has code-server (made from the tools
   * image: docs/runtimes/daytona.md). A browser cannot send the preview token, so
   * `info.urls.vscode` is a signed preview URL of its port (the token in the host name), with the
   * connection token that guards the IDE (daytona/vscodeLink.ts).
   */
  readonly vscode?: boolean
  /**
   * How long the signed VS Code link stays valid, from when the sandbox is handed to its runtime
   * (default 24 hours, the longest Daytona signs; at least 1 second).
   */
  readonly vscodeLinkExpiry?: Duration.Input
  /** The owner's heartbeat and the reaper's pace (defaults: renew 30 s, stale 5 min, reap 2 min). */
  readonly heartbeat?: HeartbeatOptions
  /** Replacements for the HTTP transport's retry and `/alive` wait schedules. */
  readonly schedules?: RuntimeSchedules
  /** Calls made while paused: fail at once with `RuntimePausedError` (default), or `"wait"` for `resume`. */
  readonly whilePaused?: WhilePaused
}

/** The snapshot DaytonaRuntime starts from unless told otherwise (docs/runtimes/daytona.md makes it). */
export const DEFAULT_SNAPSHOT = "effect-sandbox-runtime"

const SERVER_PORT = 3000
/** The header Daytona's preview proxy reads the token of a private sandbox's link from. */
const PREVIEW_TOKEN_HEADER = "x-daytona-preview-token"

/** The server's argv in the sandbox (listening on all interfaces: the preview proxy reaches it from outside). */
const argv = (options: DaytonaRuntimeOptions, files: ServerFiles) =>
  serverCommand({
    node: files.node,
    entry: files.entry,
    port: SERVER_PORT,
    workingDir: files.workspace,
    host: "0.0.0.0",
    username: options.username ?? "openhands",
    userId: options.userId ?? 1000,
    tools: options,
    restrictToWorkspace: restrictsToWorkspace(options)
  })

/** The sandbox of `sessionId`, if one exists (attach). */
const findSandbox = (client: Daytona, sessionId: string) =>
  daytonaCall(`look for the sandbox of session ${sessionId}`, async () => {
    for await (const sandbox of client.list({ labels: { [LABEL.session]: sessionId } })) return sandbox
    return undefined
  })

/** Create and start a new sandbox for `sessionId`, with our labels and server-side cleanup. */
const createSandbox = (
  client: Daytona,
  options: DaytonaRuntimeOptions,
  sandbox: SandboxConfig,
  sessionId: string,
  sessionKey: string
) =>
  daytonaCall("create a sandbox", () =>
    client.create({
      snapshot: options.snapshot ?? DEFAULT_SNAPSHOT,
      user: options.username ?? "openhands",
      envVars: serverEnv({
        env: startupEnv(sandbox, options),
        tools: options,
        sessionId,
        noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
        extra: { ...sessionKeyFileEnv, ...vscodeEnv(options) }
      }),
      labels: {
        [LABEL.managed]: "true",
        [LABEL.session]: sessionId,
        [LABEL.sessionKey]: sessionKey,
        ...ownerLabels(),
        ...(sandbox.keepRuntimeAlive ? {} : heartbeatLabels(options.heartbeat))
      },
      autoStopInterval: options.autoStopMinutes ?? 15,
      autoDeleteInterval: options.autoDeleteMinutes ?? 0
    }))

/** Delete the sandbox (on release, unless kept alive). */
const deleteSandbox = (sandbox: Sandbox) =>
  daytonaCall(`delete sandbox ${sandbox.id}`, () => sandbox.delete()).pipe(
    Effect.catch((e) => Effect.logWarning(e.message))
  )

/** A preview link's URL, without the trailing slash the client's paths would double. */
const previewLink = (sandbox: Sandbox, port: number) =>
  daytonaCall(`get the preview link of port ${port}`, () => sandbox.getPreviewLink(port)).pipe(
    Effect.map((link) => ({ url: link.url.replace(/\/+$/, ""), token: link.token }))
  )

/**
 * Create (or attach to) the sandbox of a session, in the current scope, and start its server
 * (the builder waits for it to answer through the preview link).
 */
const startSandbox = (
  client: Daytona,
  options: DaytonaRuntimeOptions,
  config: SandboxConfig,
  linkSeconds: number
) =>
  Effect.gen(function*() {
    const sessionId = options.sessionId ?? randomUUID()
    const existing = options.sessionId === undefined ? undefined : yield* findSandbox(client, sessionId)
    const release = (made: Sandbox) => config.keepRuntimeAlive ? Effect.void : deleteSandbox(made)
    // Acquired uninterruptibly with its release: a start interrupted mid-create still deletes what Daytona made.
    const sandbox = existing === undefined
      ? yield* Effect.acquireRelease(
        createSandbox(client, options, config, sessionId, randomBytes(24).toString("base64url")),
        release
      )
      : yield* Effect.acquireRelease(Effect.succeed(existing), release)
    const sessionKey = sandbox.labels[LABEL.sessionKey] ?? ""
    const serverRuns = existing !== undefined && existing.state === "started"
    if (existing !== undefined && !serverRuns) {
      // Stopped (auto-stop) or paused: started again; a stopped one lost its server with its memory.
      yield* daytonaCall(`start sandbox ${sandbox.id}`, () => sandbox.start())
    }
    if (!config.keepRuntimeAlive) yield* startHeartbeat(sandbox, options.heartbeat)
    const snapshot = options.snapshot ?? DEFAULT_SNAPSHOT
    // A paused or running server needs nothing; a new or stopped sandbox gets its server started.
    const files = existing?.state === "paused" || serverRuns
      ? undefined
      : yield* (options.server === "upload" ? uploadedServer(sandbox, snapshot) : snapshotServer(sandbox, snapshot))
    const launched = files === undefined ? undefined : yield* launchServer(sandbox, argv(options, files), sessionKey)
    const server = yield* previewLink(sandbox, SERVER_PORT)
    const apps = yield* Effect.forEach(
      options.appPorts ?? [],
      (port) => previewLink(sandbox, port).pipe(Effect.map((link) => [`app-${port}`, link.url] as const))
    )
    const sessionApiKey = Redacted.make(sessionKey)
    const workspace = files?.workspace ?? (yield* runningWorkspace(sandbox, options.server))
    return {
      id: sessionId,
      baseUrl: server.url,
      headers: { [PREVIEW_TOKEN_HEADER]: Redacted.make(server.token) },
      sessionApiKey,
      workspace,
      urls: Object.fromEntries(apps),
      capabilities: toolCapabilities(options, { pause: true }),
      aliveTimeout: "90 seconds",
      ...(launched === undefined ? {} : { startFailure: serverExited(sandbox, launched) }),
      pause: daytonaCall(`pause sandbox ${sandbox.id}`, () => sandbox.pause()),
      resume: daytonaCall(`resume sandbox ${sandbox.id}`, () => sandbox.start()),
      // Signed when handed over, so a warm sandbox's link lives its whole expiry in its runtime.
      ...(options.vscode === true
        ? {
          handOver: vscodeLink(sandbox, linkSeconds).pipe(
            Effect.flatMap((link) => vscodeUrls(options, { baseUrl: server.url, sessionApiKey, workspace }, link))
          )
        }
        : {})
    } satisfies ProvisionedSandbox
  })

/**
 * The Daytona provisioner for one layer or pool: the SDK client (closed last) and the reaper,
 * then a sandbox per `provision`.
 */
const daytonaProvisioner = (options: DaytonaRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("DaytonaRuntime options", options)
    yield* refuseHostWorkspace("DaytonaRuntime", "a Daytona sandbox", options)
    const linkSeconds = yield* vscodeLinkSeconds(options.vscodeLinkExpiry)
    const connection: DaytonaConnection = { apiKey: options.apiKey, apiUrl: options.apiUrl, target: options.target }
    const client = yield* daytonaClient(connection)
    yield* startReaper(client, options.heartbeat?.reapEvery)
    return {
      kind: "daytona",
      provision: () => startSandbox(client, options, sandbox, linkSeconds)
    } satisfies Provisioner
  })

/** Warm Daytona sandboxes waiting for a runtime. */
export class DaytonaSandboxPool extends Context.Service<DaytonaSandboxPool, ProvisionedPool>()(
  "effect-sandbox/DaytonaSandboxPool"
) {}

export const DaytonaRuntime = {
  /** A runtime in a Daytona sandbox (created, or attached to by session id); deleted on release unless kept alive. */
  layer: (
    options: DaytonaRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(options, daytonaProvisioner(options)),

  /** Keep `warmSandboxes` sandboxes started (server alive) in the background, for `layerWarm`. */
  layerPool: (
    options: DaytonaRuntimeOptions & { readonly warmSandboxes: number }
  ): Layer.Layer<DaytonaSandboxPool, RuntimeStartError | InvalidOptionsError | Config.ConfigError> => {
    // Pool members get fresh session ids; a fixed one would name one sandbox only.
    const { sessionId: _, warmSandboxes, ...shared } = options
    return provisionedPoolLayer(
      DaytonaSandboxPool,
      warmSandboxes,
      "Daytona sandbox",
      shared,
      daytonaProvisioner(shared)
    )
  },

  /** A runtime on a sandbox taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, DaytonaSandboxPool> => warmLayer(DaytonaSandboxPool, Effect.succeed)
} as const
