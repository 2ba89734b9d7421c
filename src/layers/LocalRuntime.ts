/**
 * LocalRuntime: the action server as a child process on this machine, reached
 * over loopback HTTP (no isolation: use Docker for that). Three ways in:
 *
 * - `LocalRuntime.layer(options)`: start a server for this runtime (cold start);
 * - `LocalRuntime.layerPool({ poolSize })` + `LocalRuntime.layerWarm()`: keep
 *   servers started in the background and hand a ready one to each runtime
 *   (OpenHands' DESIRED_NUM_WARM_SERVERS); released runtimes are not reused;
 * - `LocalRuntime.connect({ url, sessionApiKey })`: connect to a running server
 *   without owning it.
 */
import { type Config, Context, Effect, Layer, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { RuntimeSchedules } from "../client/policies.ts"
import { scopedStateDir } from "../executor/ActionExecutor.ts"
import { LOCAL_SECRETS_REFUSAL, refuseSecrets } from "../network/edgeSecrets.ts"
import { LOCAL_EGRESS_REFUSAL, refusePolicy } from "../network/policy.ts"
import {
  connectLayer,
  type ConnectOptions,
  provisionedLayer,
  type ProvisionedPool,
  provisionedPoolLayer,
  warmLayer
} from "../provisioned/provisioned.ts"
import { scopedWorkspace } from "../runtime/hostWorkspace.ts"
import { checkRuntimeOptions, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import type { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import { type SandboxConfig, sandboxConfigOr } from "../schema/SandboxConfig.ts"
import { CODE_SERVER_VARIABLE } from "../server/vscode/codeServer.ts"
import { toolCapabilities, vscodeEnv, vscodeUrls } from "../serverStart/serverTools.ts"
import type { Provisioner } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { localCodeServer } from "./local/codeServer.ts"
import { freeLoopbackPort } from "./local/loopbackPort.ts"
import { startServerProcess } from "./local/serverProcess.ts"

/** The shared options (services/RuntimeOptions.ts) and the server script to run. */
export interface LocalRuntimeOptions extends RuntimeOptions {
  /** The server script to run (default: the bundled payload; in a checkout, built from its sources first when they changed). */
  readonly serverEntry?: string
  /** Replacements for the HTTP transport's retry and `/alive` wait schedules (`retrySchedule`, `aliveSchedule`). */
  readonly schedules?: RuntimeSchedules
  /**
   * code-server's package directory on this machine (`<dir>/node_modules/code-server` after `npm
   * install code-server@4` in `<dir>`), for `vscode: true`. Default: `EFFECT_SANDBOX_CODE_SERVER`,
   * then the tools image's `/opt/code-server/node_modules/code-server`. With `vscode` and no
   * code-server there the layer fails with an `InvalidOptionsError` rather than start without the IDE.
   */
  readonly codeServer?: string
}

/** What the servers of a pool are started with: each gets its own session id. */
export type LocalServerOptions = Omit<LocalRuntimeOptions, "sessionId">

/**
 * The local provisioner: a server process (and its workspace, state directory and key) in the
 * provision's scope, on 127.0.0.1, with VS Code on a free port of 127.0.0.1 when asked for (and
 * code-server found first). No pause: a process has nothing to freeze.
 */
const localProvisioner = (options: LocalRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("LocalRuntime options", options)
    yield* refusePolicy("LocalRuntime", options.network, LOCAL_EGRESS_REFUSAL)
    yield* refuseSecrets("LocalRuntime", options.secrets, LOCAL_SECRETS_REFUSAL)
    const codeServer = yield* localCodeServer(options)
    return {
      kind: "local",
      provision: () =>
        Effect.gen(function*() {
          const sessionId = options.sessionId ?? randomUUID()
          const workspace = yield* scopedWorkspace(options, `local-${sessionId.slice(0, 8)}`, "LocalRuntime options")
          // A fresh key per server: other local users cannot drive it through its port.
          const sessionApiKey = Redacted.make(randomBytes(24).toString("base64url"))
          // Created before the server and removed after it stops: nothing is left even if it is killed.
          const stateDir = yield* scopedStateDir
          const vscode = codeServer === undefined ? undefined : { codeServer, port: yield* freeLoopbackPort }
          const server = yield* startServerProcess({
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
              ...(options.pidsLimit === undefined ? {} : { EFFECT_SANDBOX_PIDS_LIMIT: String(options.pidsLimit) }),
              ...(vscode === undefined
                ? {}
                : { ...vscodeEnv(options, vscode.port), [CODE_SERVER_VARIABLE]: vscode.codeServer })
            },
            tools: options,
            ...(options.serverEntry === undefined ? {} : { serverEntry: options.serverEntry })
          })
          return {
            id: sessionId,
            baseUrl: server.baseUrl,
            sessionApiKey,
            workspace,
            capabilities: toolCapabilities(options, { pause: false }),
            // The token proxy listens where the server does: 127.0.0.1.
            handOver: vscodeUrls(
              options,
              { baseUrl: server.baseUrl, sessionApiKey, workspace },
              vscode === undefined ? undefined : `http://127.0.0.1:${vscode.port}`
            )
          }
        })
    } satisfies Provisioner
  })

/** Warm servers waiting for a runtime. */
export class LocalServerPool extends Context.Service<LocalServerPool, ProvisionedPool>()(
  "effect-sandbox/LocalServerPool"
) {}

export const LocalRuntime = {
  /** A runtime on a freshly started local server (stopped, workspace removed, on release). */
  layer: (
    options: LocalRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(options, localProvisioner(options)),

  /** Keep `poolSize` servers started in the background, for `layerWarm`. */
  layerPool: ({ poolSize, ...options }: LocalServerOptions & { readonly poolSize: number }): Layer.Layer<
    LocalServerPool,
    InvalidOptionsError | Config.ConfigError
  > =>
    provisionedPoolLayer(
      LocalServerPool,
      { runtime: "LocalRuntime", size: poolSize, what: "local server" },
      options,
      localProvisioner(options)
    ),

  /** A runtime on a server taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (
    options: { readonly sandbox?: SandboxConfig } = {}
  ): Layer.Layer<Runtime, Config.ConfigError, LocalServerPool> =>
    warmLayer(LocalServerPool, () => sandboxConfigOr(options.sandbox)),

  /**
   * Connect to an action server someone else runs, by its URL; releasing the layer leaves it
   * running. (`attach`, on the hosted runtimes, finds a kept sandbox by its session id: a local
   * server has no provider to keep it.)
   */
  connect: (options: ConnectOptions): Layer.Layer<Runtime, RuntimeStartError | Config.ConfigError> =>
    connectLayer("local", options)
} as const
