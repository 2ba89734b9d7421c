/**
 * LocalRuntime: the action server as a child process on this machine, reached
 * over loopback HTTP (no isolation: use Docker for that). Three ways in:
 *
 * - `LocalRuntime.layer(options)`: start a server for this runtime (cold start);
 * - `LocalRuntime.layerPool({ warmServers })` + `LocalRuntime.layerWarm()`: keep
 *   servers started in the background and hand a ready one to each runtime
 *   (OpenHands' DESIRED_NUM_WARM_SERVERS); released runtimes are not reused;
 * - `LocalRuntime.attach({ url, sessionApiKey })`: connect to a running server
 *   without owning it.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { type Config, Context, type Duration, Effect, Layer, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { makeActionClient, waitUntilAlive } from "../client/ActionClient.ts"
import type { RuntimeSchedules } from "../client/policies.ts"
import { captureDraftEditor } from "../editor/draftEditor.ts"
import { scopedStateDir } from "../executor/ActionExecutor.ts"
import { makeRuntime } from "../runtime/makeRuntime.ts"
import { makeStatus, type StatusCell } from "../runtime/statusCell.ts"
import { type InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigOr } from "../schema/SandboxConfig.ts"
import { Runtime, type RuntimeCapabilities } from "../services/Runtime.ts"
import type { RuntimeOptions, RuntimeTools } from "../services/RuntimeOptions.ts"
import { checkRuntimeOptions, restrictsToWorkspace, startupEnv } from "./internal/options.ts"
import {
  sendMcpServers,
  serverCapabilities,
  serverToolArgs,
  serverToolEnv,
  toolCapabilities
} from "./internal/serverTools.ts"
import { makeWarmPool, type WarmPool } from "./internal/warmPool.ts"
import { scopedWorkspace } from "./internal/workspace.ts"
import { type ServerProcess, startServerProcess } from "./local/serverProcess.ts"

/** The shared options (services/RuntimeOptions.ts) and the server script to run. */
export interface LocalRuntimeOptions extends RuntimeOptions {
  /** The server script to run (default: the bundled payload when installed, the source in this repo). */
  readonly serverEntry?: string
  /** Replacements for the HTTP transport's retry and `/alive` wait schedules (`retrySchedule`, `aliveSchedule`). */
  readonly schedules?: RuntimeSchedules
}

/** What the servers of a pool are started with: each gets its own session id. */
export type LocalServerOptions = Omit<LocalRuntimeOptions, "sessionId">

/** A started server with its workspace and key, ready for a client. */
interface LocalServer {
  readonly process: ServerProcess
  readonly workspace: string
  readonly sessionId: string
  readonly sessionApiKey: Redacted.Redacted<string>
  readonly capabilities: RuntimeCapabilities
  readonly schedules: RuntimeSchedules | undefined
}

/** What a server with these tools can do (an attached server's tools are unknown: none assumed). */
const capabilitiesOf = (options: RuntimeTools = {}): RuntimeCapabilities => toolCapabilities(options, { pause: false })

/** Start a server (and its workspace) in the current scope. */
const startLocalServer = (options: LocalRuntimeOptions) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("LocalRuntime options", options)
    const sandbox = yield* sandboxConfigOr(options.sandbox)
    const sessionId = options.sessionId ?? randomUUID()
    const workspace = yield* scopedWorkspace(options, `local-${sessionId.slice(0, 8)}`, "LocalRuntime options")
    // A fresh key per server: other local users cannot drive it through its port.
    const sessionApiKey = Redacted.make(randomBytes(24).toString("base64url"))
    // Created before the server and removed after it stops: nothing is left even if it is killed.
    const stateDir = yield* scopedStateDir
    const process = yield* startServerProcess({
      workspace,
      stateDir,
      // Ours to remove: the server removes them too when it stops, so even a SIGKILL of this process leaves none.
      temporaryDirs: options.workspace === undefined && options.keepWorkspace !== true
        ? [workspace, stateDir]
        : [stateDir],
      sessionId,
      sessionApiKey,
      noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
      restrictToWorkspace: restrictsToWorkspace(options),
      env: {
        ...startupEnv(sandbox, options),
        ...serverToolEnv(options),
        ...(options.pidsLimit === undefined ? {} : { EFFECT_SANDBOX_PIDS_LIMIT: String(options.pidsLimit) })
      },
      toolArgs: serverToolArgs(options),
      ...(options.serverEntry === undefined ? {} : { serverEntry: options.serverEntry })
    })
    yield* waitUntilAlive(process.baseUrl, undefined, options.schedules?.waitUntilAlive)
    yield* sendMcpServers(process.baseUrl, sessionApiKey, options.mcp?.stdio)
    return {
      process,
      workspace,
      sessionId,
      sessionApiKey,
      capabilities: yield* serverCapabilities(process.baseUrl, sessionApiKey, capabilitiesOf(options)),
      schedules: options.schedules
    } satisfies LocalServer
  }).pipe(
    // Only for the /alive wait; each runtime keeps its own client for its lifetime.
    Effect.provide(NodeHttpClient.layerUndici)
  )

/** A `Runtime` over a started server. */
const runtimeFor = (
  server: LocalServer,
  status: StatusCell,
  sandbox: SandboxConfig
) =>
  Effect.gen(function*() {
    const backend = yield* makeActionClient({
      baseUrl: server.process.baseUrl,
      sessionApiKey: server.sessionApiKey,
      defaultTimeoutSeconds: sandbox.timeout,
      status,
      retrySchedule: server.schedules?.retry,
      info: {
        id: server.sessionId,
        kind: "local",
        workspace: server.workspace,
        urls: { actionServer: server.process.baseUrl },
        capabilities: server.capabilities
      }
    })
    return makeRuntime({ ...backend, draftEditor: yield* captureDraftEditor }, status)
  })

/** Warm servers waiting for a runtime. */
export class LocalServerPool extends Context.Service<LocalServerPool, WarmPool<LocalServer>>()(
  "effect-sandbox/LocalServerPool"
) {}

const makePool = ({ warmServers, ...options }: LocalServerOptions & { readonly warmServers: number }) =>
  Effect.map(makeWarmPool(warmServers, startLocalServer(options), "local server"), LocalServerPool.of)

export const LocalRuntime = {
  /** A runtime on a freshly started local server (stopped, workspace removed, on release). */
  layer: (
    options: LocalRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    Layer.effect(
      Runtime,
      Effect.gen(function*() {
        const status = yield* makeStatus
        const sandbox = yield* sandboxConfigOr(options.sandbox)
        const server = yield* startLocalServer({ ...options, sandbox })
        yield* status.set("RUNTIME_STARTED")
        const runtime = yield* runtimeFor(server, status, sandbox)
        yield* status.set("READY")
        return runtime
      })
    ).pipe(Layer.provide(NodeHttpClient.layerUndici)),

  /** Keep `warmServers` servers started in the background, for `layerWarm`. */
  layerPool: (options: LocalServerOptions & { readonly warmServers: number }): Layer.Layer<LocalServerPool> =>
    Layer.effect(LocalServerPool, makePool(options)),

  /** A runtime on a server taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (
    options: { readonly sandbox?: SandboxConfig } = {}
  ): Layer.Layer<Runtime, Config.ConfigError, LocalServerPool> =>
    Layer.effect(
      Runtime,
      Effect.gen(function*() {
        const status = yield* makeStatus
        const sandbox = yield* sandboxConfigOr(options.sandbox)
        const server = yield* (yield* LocalServerPool).take
        const runtime = yield* runtimeFor(server, status, sandbox)
        yield* status.set("READY")
        return runtime
      })
    ).pipe(Layer.provide(NodeHttpClient.layerUndici)),

  /** Connect to an already running action server; releasing the layer leaves it running. */
  attach: (options: {
    readonly url: string
    readonly sessionApiKey?: Redacted.Redacted<string>
    readonly workspace?: string
    readonly sandbox?: SandboxConfig
    /** How long to wait for `/alive` (default 120 s). */
    readonly aliveTimeout?: Duration.Input
    readonly schedules?: RuntimeSchedules
  }): Layer.Layer<Runtime, RuntimeStartError | Config.ConfigError> =>
    Layer.effect(
      Runtime,
      Effect.gen(function*() {
        const status = yield* makeStatus
        const sandbox = yield* sandboxConfigOr(options.sandbox)
        const baseUrl = options.url.replace(/\/+$/, "")
        yield* waitUntilAlive(baseUrl, options.aliveTimeout, options.schedules?.waitUntilAlive)
        const backend = yield* makeActionClient({
          baseUrl,
          sessionApiKey: options.sessionApiKey,
          defaultTimeoutSeconds: sandbox.timeout,
          status,
          retrySchedule: options.schedules?.retry,
          info: {
            id: baseUrl,
            kind: "local",
            workspace: options.workspace ?? "/workspace",
            urls: { actionServer: baseUrl },
            capabilities: capabilitiesOf()
          }
        })
        const runtime = makeRuntime({ ...backend, draftEditor: yield* captureDraftEditor }, status)
        yield* status.set("READY")
        return runtime
      })
    ).pipe(Layer.provide(NodeHttpClient.layerUndici))
} as const
