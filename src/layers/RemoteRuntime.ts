/**
 * RemoteRuntime: the sandbox is a runtime that a runtime API (OpenHands' remote runtime API, spec
 * §14) starts, pauses and stops on our behalf; the action server inside it is reached through the
 * URL the API gives, with the session key the API gives. This module is the client side: the
 * session lookup (attach to a running runtime, resume a paused one), `/start`, the pod wait and
 * the release policy; the HTTP transport, `/alive` wait and the rest come from the provisioned
 * builder (layers/internal/provisioned.ts).
 */
import { Config, Duration, Effect, type Layer, Option, Redacted, Schedule, Schema } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { IMAGE_NODE, IMAGE_SERVER, IMAGE_WORKSPACE } from "../engines/docker/containerSpec.ts"
import { checkRuntimeOptions, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import { InvalidOptionsError, RuntimeDisconnectedError, RuntimeStartError } from "../schema/errors.ts"
import { decodeOptions } from "../schema/issues.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { serverCommand, serverEnv } from "../server/commandLine.ts"
import type { Provisioner, ProvisionStatus } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { imageRequirements } from "./internal/imageContext.ts"
import { provisionedLayer } from "./internal/provisioned.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "./internal/sandboxUser.ts"
import { toolCapabilities, vscodeUrls } from "./internal/serverTools.ts"
import { remoteServerErrors } from "./remote/actionServerErrors.ts"
import { makeRuntimeApi, type RuntimeApi, type StartRequest } from "./remote/api.ts"
import { remoteRuntimeImage } from "./remote/imageBuild.ts"
import { waitForPod } from "./remote/podReadiness.ts"
import {
  ACTION_SERVER_PORT,
  actionServerRetrySchedule,
  apiRetrySchedule,
  BUILD_TIMEOUT,
  buildRetrySchedule,
  buildStatusSchedule,
  DEFAULT_API_TIMEOUT,
  DEFAULT_API_URL,
  DEFAULT_INIT_TIMEOUT,
  podStatusSchedule,
  type RemoteSchedules
} from "./remote/policies.ts"

/**
 * The shared options (services/RuntimeOptions.ts) that apply to a sandbox on another machine, and
 * the remote runtime's own, named after OpenHands' `remote_runtime_*` settings (spec §15.1).
 */
export interface RemoteRuntimeOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace" | "pidsLimit"> {
  /** The runtime API (default `http://localhost:8000`). */
  readonly apiUrl?: string
  /**
   * VS Code: `--plugins vscode` in the command sent to `/start` (as OpenHands sends it; the API
   * sets `VSCODE_PORT`), and `info.urls.vscode` where OpenHands' client puts it: path mode
   * `<api>/<runtime_id>/vscode?tkn=..&folder=..`, else `<scheme>://vscode-<netloc>/?tkn=..`.
   * Absent when the API left the plugin off (ours does outside proxy mode).
   */
  readonly vscode?: boolean
  /** Its key, sent as `X-API-Key` (default: the `SANDBOX_API_KEY` variable). */
  readonly apiKey?: Redacted.Redacted<string>
  /**
   * The runtime image the API runs (default `sandbox.runtimeContainerImage`). Without one, the API
   * builds it from `baseImage` and this package's server (`/build`), unless it already has it.
   */
  readonly image?: string
  /** The base of a runtime image the API builds (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /** The API's resource multiplier (1, 2, 4 or 8; default 1). */
  readonly resourceFactor?: 1 | 2 | 4 | 8
  /** The container runtime: `sysbox` (sent as `sysbox-runc`) or `gvisor` (the API's default, not sent). */
  readonly runtimeClass?: "sysbox" | "gvisor"
  /** Only use the session's existing runtime; none is a start error. Release leaves it as it is. */
  readonly attachToExisting?: boolean
  /** On release, keep the runtime (paused unless `pauseClosedRuntimes: false`) instead of stopping it. */
  readonly keepRuntimeAlive?: boolean
  /** With `keepRuntimeAlive`: pause the runtime on release (default true). */
  readonly pauseClosedRuntimes?: boolean
  /** How long the runtime may take to become ready, pod then `/alive` (default 180 s). */
  readonly initTimeout?: Duration.Input
  /** Each runtime-API request's budget (default 180 s). */
  readonly apiTimeout?: Duration.Input
  /** Re-send action-server requests that never reached it (default true). */
  readonly enableRetries?: boolean
  /** The user of the runtime image the API builds (default uid 74289 `openhands`, as DockerRuntime's). */
  readonly userId?: number
  readonly username?: string
  readonly schedules?: RemoteSchedules
}

const SUBJECT = "RemoteRuntime options"

/**
 * The error of a remote runtime without a key, naming where ours go (OpenHands' own text points to
 * its `config.toml`, which this package does not read).
 */
export const MISSING_API_KEY =
  "RemoteRuntime options: no apiKey given and SANDBOX_API_KEY is not set (the runtime API's key, sent as X-API-Key)."

const RemoteOptionsSchema = Schema.Struct({
  apiUrl: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^https?:\/\/[^/]/))),
  image: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  baseImage: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  resourceFactor: Schema.optionalKey(Schema.Literals([1, 2, 4, 8])),
  runtimeClass: Schema.optionalKey(Schema.Literals(["sysbox", "gvisor"])),
  userId: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})

/** Options for a machine elsewhere: the host directory ones cannot apply, and are refused rather than ignored. */
const checkRemoteOptions = (options: RemoteRuntimeOptions) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions(SUBJECT, options)
    yield* decodeOptions(RemoteOptionsSchema, SUBJECT)(options)
    const local = (["workspace", "keepWorkspace", "pidsLimit"] as const).filter((k) => k in options)
    if (local.length > 0) {
      return yield* new InvalidOptionsError({
        message: `Invalid ${SUBJECT}: ${local.join(", ")}: not for a remote runtime (its workspace is ` +
          `${IMAGE_WORKSPACE} in the sandbox, its limits the runtime API's)`
      })
    }
  })

/** The key from the options, else `SANDBOX_API_KEY`; neither is `MISSING_API_KEY`. */
const apiKeyOf = (options: RemoteRuntimeOptions) =>
  options.apiKey !== undefined ?
    Effect.succeed(options.apiKey) :
    Config.option(Config.Redacted("SANDBOX_API_KEY")).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new InvalidOptionsError({ message: MISSING_API_KEY })),
        onSome: Effect.succeed
      }))
    )

const usernameOf = (options: RemoteRuntimeOptions) => options.username ?? DEFAULT_SANDBOX_USERNAME
const userIdOf = (options: RemoteRuntimeOptions) => options.userId ?? DEFAULT_SANDBOX_UID

/** `POST /start`'s body: our server on port 60000, its environment, and the API's own fields. */
export const startRequest = (
  image: string,
  options: RemoteRuntimeOptions,
  sandbox: SandboxConfig,
  sessionId: string,
  sessionApiKey: Redacted.Redacted<string>
): StartRequest => ({
  image,
  command: serverCommand({
    node: IMAGE_NODE,
    entry: IMAGE_SERVER,
    port: ACTION_SERVER_PORT,
    workingDir: IMAGE_WORKSPACE,
    // Reached through the API's proxy, from outside the runtime's network namespace, with the key.
    host: "0.0.0.0",
    username: usernameOf(options),
    userId: userIdOf(options),
    tools: options,
    restrictToWorkspace: restrictsToWorkspace(options)
  }),
  working_dir: IMAGE_WORKSPACE,
  environment: serverEnv({
    env: startupEnv(sandbox, options),
    tools: options,
    sessionId,
    noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
    // The key our server reads when the API gives none of its own (server/sessionKey.ts).
    extra: { SESSION_API_KEY: Redacted.value(sessionApiKey) }
  }),
  session_id: sessionId,
  resource_factor: options.resourceFactor ?? 1,
  ...(options.runtimeClass === "sysbox" ? { runtime_class: "sysbox-runc" } : {})
})

/**
 * Where OpenHands' RemoteRuntime puts VS Code of a runtime at `runtimeUrl`: path mode (the URL's
 * path starts with `/<runtime_id>`: the API proxies by path) `<scheme>://<netloc>/<runtime_id>/vscode`,
 * followed directly by the query; else the `vscode-` host beside the runtime's,
 * `<scheme>://vscode-<netloc>`, followed by `/` and the query. The API decides whether anything
 * answers there (ours: only in proxy mode, docs/runtime-api.md).
 */
export const remoteVsCodeBase = (runtimeUrl: string, runtimeId: string) => {
  const url = new URL(runtimeUrl)
  return url.pathname.startsWith(`/${runtimeId}`)
    ? { base: `${url.protocol}//${url.host}/${runtimeId}/vscode`, path: "" as const }
    : { base: `${url.protocol}//vscode-${url.host}`, path: "/" as const }
}

/** A runtime of the API: its id, where its server answers, its app hosts, its key when the API set one. */
interface RemoteSandbox {
  readonly runtime_id: string
  readonly url: string
  readonly work_hosts?: Readonly<Record<string, number>>
  readonly session_api_key?: string | null
}

/**
 * The session's runtime if it has a usable one: running, or paused and resumed (a failed resume
 * counts as none, as in OpenHands).
 */
const existingRuntime = Effect.fn("RemoteRuntime.existingRuntime")(function*(
  api: RuntimeApi,
  sessionId: string,
  waitReady: (runtimeId: string) => Effect.Effect<void, RuntimeStartError>
) {
  const session = yield* api.session(sessionId).pipe(
    Effect.mapError((failure) => new RuntimeStartError({ message: failure.message }))
  )
  if (session === undefined || session.runtime_id === undefined || session.url === undefined) return undefined
  const found: RemoteSandbox = { ...session, runtime_id: session.runtime_id, url: session.url }
  if (session.status === "running") return found
  if (session.status !== "paused") return undefined
  return yield* api.resume(found.runtime_id).pipe(
    Effect.mapError((failure) => new RuntimeStartError({ message: failure.message })),
    Effect.andThen(waitReady(found.runtime_id)),
    Effect.as(found),
    Effect.catch((error) =>
      Effect.logWarning(`Could not resume the paused runtime ${found.runtime_id}: ${error.message}`).pipe(
        Effect.as(undefined)
      )
    )
  )
})

/** A new runtime for the session: its image (given, or built by the API when it lacks it), then `/start`. */
const startRuntime = Effect.fn("RemoteRuntime.startRuntime")(function*(
  api: RuntimeApi,
  options: RemoteRuntimeOptions,
  sandbox: SandboxConfig,
  sessionId: string,
  sessionApiKey: Redacted.Redacted<string>,
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) {
  const image = options.image ?? sandbox.runtimeContainerImage ?? (yield* remoteRuntimeImage(api, {
    baseImage: options.baseImage ?? sandbox.baseContainerImage,
    userId: userIdOf(options),
    username: usernameOf(options),
    requires: imageRequirements(options, sandbox),
    statusSchedule: options.schedules?.buildStatus ?? buildStatusSchedule,
    timeout: BUILD_TIMEOUT
  }, onStatus))
  return yield* api.start(startRequest(image, options, sandbox, sessionId, sessionApiKey)).pipe(
    Effect.mapError((failure) => new RuntimeStartError({ message: failure.message }))
  )
})

/** What release does with the runtime (spec §14 `close()`). */
const release = (api: RuntimeApi, runtimeId: string, options: RemoteRuntimeOptions, sandbox: SandboxConfig) => {
  const keepAlive = options.keepRuntimeAlive ?? sandbox.keepRuntimeAlive
  const step = options.attachToExisting === true
    ? Effect.void
    : keepAlive
    ? options.pauseClosedRuntimes === false ? Effect.void : api.pause(runtimeId)
    : api.stop(runtimeId)
  // A finalizer cannot fail: a refused stop or pause is reported, the runtime API keeps the runtime.
  return step.pipe(
    Effect.catch((failure) => Effect.logError(`Releasing remote runtime ${runtimeId}: ${failure.message}`))
  )
}

/** The remote provisioner: a runtime of the API for the session, found, resumed or started, released by policy. */
const remoteProvisioner = (options: RemoteRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkRemoteOptions(options)
    const apiKey = yield* apiKeyOf(options)
    const schedules = options.schedules ?? {}
    const initTimeout = Duration.fromInputUnsafe(options.initTimeout ?? DEFAULT_INIT_TIMEOUT)
    const api = yield* makeRuntimeApi({
      apiUrl: options.apiUrl ?? DEFAULT_API_URL,
      apiKey,
      timeout: Duration.fromInputUnsafe(options.apiTimeout ?? DEFAULT_API_TIMEOUT),
      retry: schedules.api ?? apiRetrySchedule,
      buildRetry: schedules.buildRetry ?? buildRetrySchedule
    })
    const waitReady = (runtimeId: string) =>
      waitForPod(api, runtimeId, initTimeout, schedules.podStatus ?? podStatusSchedule)
    const keepAlive = options.keepRuntimeAlive ?? sandbox.keepRuntimeAlive
    return {
      kind: "remote",
      provision: (onStatus) =>
        Effect.gen(function*() {
          const sessionId = options.sessionId ?? randomUUID()
          const existing = yield* existingRuntime(api, sessionId, waitReady)
          if (existing === undefined && options.attachToExisting === true) {
            return yield* new RuntimeStartError({ message: `Could not find existing runtime for SID: ${sessionId}` })
          }
          const ownKey = Redacted.make(randomBytes(24).toString("base64url"))
          const runtime: RemoteSandbox = existing ??
            (yield* startRuntime(api, options, sandbox, sessionId, ownKey, onStatus))
          // From here the runtime is ours to release, whether it gets ready or not.
          yield* Effect.addFinalizer(() => release(api, runtime.runtime_id, options, sandbox))
          if (existing === undefined) yield* waitReady(runtime.runtime_id)
          const resume = api.resume(runtime.runtime_id).pipe(
            Effect.mapError((failure) => new RuntimeDisconnectedError({ message: failure.message })),
            Effect.andThen(waitReady(runtime.runtime_id))
          )
          const baseUrl = runtime.url.replace(/\/+$/, "")
          const sessionApiKey = typeof runtime.session_api_key === "string"
            ? Redacted.make(runtime.session_api_key)
            : ownKey
          const vscode = remoteVsCodeBase(baseUrl, runtime.runtime_id)
          return {
            id: sessionId,
            baseUrl,
            sessionApiKey,
            workspace: IMAGE_WORKSPACE,
            urls: Object.fromEntries(
              Object.entries(runtime.work_hosts ?? {}).map(([host, port]) => [`app-${port}`, host])
            ),
            capabilities: toolCapabilities(options, { pause: true }),
            aliveTimeout: initTimeout,
            pause: api.pause(runtime.runtime_id).pipe(
              Effect.mapError((failure) => new RuntimeDisconnectedError({ message: failure.message }))
            ),
            resume,
            serverError: remoteServerErrors(keepAlive ? resume : undefined),
            handOver: vscodeUrls(
              options,
              { baseUrl, sessionApiKey, workspace: IMAGE_WORKSPACE },
              vscode.base,
              vscode.path
            )
          }
        })
    } satisfies Provisioner
  })

export const RemoteRuntime = {
  /** A runtime of the runtime API for the session (found, resumed or started), released by the keep-alive policy. */
  layer: (
    options: RemoteRuntimeOptions
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(
      {
        ...options,
        schedules: {
          ...options.schedules,
          retry: options.schedules?.retry ??
            (options.enableRetries === false ? Schedule.recurs(0) : actionServerRetrySchedule)
        }
      },
      remoteProvisioner(options)
    )
} as const
