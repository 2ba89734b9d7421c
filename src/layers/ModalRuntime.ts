/**
 * ModalRuntime: the action server in a Modal sandbox (gVisor), through the official `modal` SDK
 * (0.11), reached through the sandbox's encrypted tunnel with the shared HTTP client.
 *
 * The sandbox runs an image made from the runtime image (docs/runtimes/modal.md), and its command
 * is the action server itself (modal/launcher.ts), so no exec channel is needed. The server gets
 * the SHA-256 of its session key, never the key (as KubernetesRuntime's pods): all it needs to
 * check requests, and nothing a sandboxed command could call it with. The sandbox has a timeout
 * and an idle timeout set on create; the owner keeps it busy through the tunnel while it lives, so
 * a crashed owner's sandbox ends on Modal's side; its tags name its session, owner and key, so a
 * later layer attaches by session id and a reaper terminates those of dead owners on this host.
 * Modal cannot freeze a sandbox: pause and resume are `UnsupportedCapabilityError`s.
 */
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import type { App, Image, ModalClient, Sandbox } from "modal"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import type { RuntimeSchedules } from "../client/policies.ts"
import { SESSION_KEY_SHA256_VARIABLE } from "../executor/childEnv.ts"
import { sandboxTags, TAGS } from "../hosted/ownerTags.ts"
import { checkRuntimeOptions, refuseHostWorkspace, restrictsToWorkspace } from "../runtime/options.ts"
import { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { sandboxServerEnv, serverCommand } from "../server/commandLine.ts"
import type { Disconnect, ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import type { Runtime } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { toolCapabilities, VSCODE_PORT, vscodeEnv, vscodeUrls } from "./internal/serverTools.ts"
import { IMAGE_FILES, launcherCommand, WORKSPACE } from "./modal/launcher.ts"
import { MODAL_RATE_LIMIT_RETRY } from "./modal/rateLimit.ts"
import { startReaper } from "./modal/reaper.ts"
import { sandboxesTagged, terminate } from "./modal/sandboxes.ts"
import { modalCall, modalClient, type ModalConnection, ModalError } from "./modal/sdk.ts"

/**
 * The shared options (services/RuntimeOptions.ts) and Modal's own. `workspace` (a directory on
 * this machine) does not apply: the sandbox has its own /workspace, filled with `copyTo`.
 */
export interface ModalRuntimeOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The token pair (default: `MODAL_TOKEN_ID` / `MODAL_TOKEN_SECRET`, through Effect Config). */
  readonly tokenId?: Redacted.Redacted<string>
  readonly tokenSecret?: Redacted.Redacted<string>
  /** The Modal environment (default the profile's, `MODAL_ENVIRONMENT`). */
  readonly environment?: string
  /** The API server (default `MODAL_SERVER_URL`, else the profile's, else Modal's `https://api.modal.com:443`). */
  readonly serverUrl?: string
  /** The app the sandboxes belong to (created when missing; default `effect-sandbox`). */
  readonly app?: string
  /**
   * The image: the name of a Modal image published from the runtime image (default
   * `effect-sandbox-runtime`, made as docs/runtimes/modal.md says).
   */
  readonly image?: string
  /** Instead of `image`: a registry reference Modal pulls (the runtime image pushed to a public registry). */
  readonly registryImage?: string
  /** The sandbox's whole life, in whole seconds (default 24 hours, Modal's maximum). */
  readonly timeout?: Duration.Input
  /**
   * How long without activity before Modal ends the sandbox, in whole seconds (default 5 minutes).
   * The owner sends a request through the tunnel every third of it, so only an orphan idles; a
   * sandbox kept alive on release has none (it outlives its owner: only `timeout` ends it).
   */
  readonly idleTimeout?: Duration.Input
  /** CPU cores requested (fractions allowed; default Modal's). */
  readonly cpu?: number
  /** Memory requested, in MiB (default Modal's). */
  readonly memoryMiB?: number
  /**
   * Extra ports reported in `info.urls` as `app-<port>` (each through an encrypted tunnel of its own).
   * With the shared `vscode` option, VS Code's port (8001) gets one too, and `info.urls.vscode` is
   * that tunnel's URL with the IDE's connection token (the image must be made from the tools image).
   */
  readonly appPorts?: ReadonlyArray<number>
  /** How often the reaper looks for sandboxes of dead owners on this host (default 60 s). */
  readonly reapEvery?: Duration.Input
  /** Retries of rate-limited calls (RESOURCE_EXHAUSTED; default `MODAL_RATE_LIMIT_RETRY`). */
  readonly rateLimitRetry?: Schedule.Schedule<unknown>
  readonly schedules?: RuntimeSchedules
}

const SERVER_PORT = 8000
const DEFAULT_APP = "effect-sandbox"
const DEFAULT_IMAGE = "effect-sandbox-runtime"
/** How often a running sandbox is checked for having ended (terminated, timed out). */
const GONE_CHECK_EVERY = "5 seconds"

/** What one layer's sandboxes share: the client, the app and image (looked up once), the options. */
interface ModalContext {
  readonly client: ModalClient
  readonly app: App
  readonly image: Image
  readonly imageName: string
  readonly options: ModalRuntimeOptions
  readonly sandbox: SandboxConfig
  readonly timeoutMs: number
  readonly idleTimeoutMs: number
  readonly retry: Schedule.Schedule<unknown>
}

/** An SDK failure while starting, as the start's error (Modal's own text in it). */
const startError = (error: ModalError | RuntimeStartError) =>
  error instanceof ModalError ? new RuntimeStartError({ message: error.message }) : error

/** The running sandbox of a session, with its key, if there is one (attach). */
const findSession = (ctx: ModalContext, sessionId: string) =>
  sandboxesTagged(ctx.client, ctx.app, { [TAGS.managed]: "true", [TAGS.session]: sessionId }, ctx.retry, 1)
    .pipe(
      Effect.map(([found]) => {
        const key = found?.tags[TAGS.sessionKey]
        return found === undefined || key === undefined ? undefined : { sandbox: found.sandbox, sessionKey: key }
      })
    )

/** The server's argv (listening on all interfaces: the tunnel reaches it from outside the sandbox). */
const serverArgv = (options: ModalRuntimeOptions) =>
  serverCommand({
    ...IMAGE_FILES,
    port: SERVER_PORT,
    workingDir: WORKSPACE,
    host: "0.0.0.0",
    // A Modal sandbox's command runs as root (in gVisor); the server and its commands with it.
    username: "root",
    userId: 0,
    tools: options,
    restrictToWorkspace: restrictsToWorkspace(options)
  })

/** A new sandbox running the server, with its timeouts and our tags, terminated with the scope unless kept alive. */
const createSandbox = (ctx: ModalContext, sessionId: string, sessionKey: string) => {
  const { options } = ctx
  const keepAlive = ctx.sandbox.keepRuntimeAlive
  return Effect.acquireRelease(
    modalCall(
      `create a sandbox from image ${ctx.imageName}`,
      () =>
        ctx.client.sandboxes.create(ctx.app, ctx.image, {
          command: launcherCommand(serverArgv(options)),
          env: sandboxServerEnv(ctx.sandbox, options, sessionId, {
            ...vscodeEnv(options),
            [SESSION_KEY_SHA256_VARIABLE]: createHash("sha256").update(sessionKey).digest("hex")
          }),
          encryptedPorts: [SERVER_PORT, ...(options.vscode === true ? [VSCODE_PORT] : []), ...(options.appPorts ?? [])],
          timeoutMs: ctx.timeoutMs,
          ...(keepAlive ? {} : { idleTimeoutMs: ctx.idleTimeoutMs }),
          ...(options.cpu === undefined ? {} : { cpu: options.cpu }),
          ...(options.memoryMiB === undefined ? {} : { memoryMiB: options.memoryMiB }),
          tags: sandboxTags({ sessionId, sessionKey, keepAlive })
        }),
      ctx.retry
    ),
    (sandbox) => keepAlive ? Effect.void : terminate(sandbox, ctx.retry)
  )
}

/** The last lines the sandbox's command printed, from Modal's persisted logs (stdout and stderr). */
const lastOutput = (ctx: ModalContext, sandbox: Sandbox) =>
  modalCall(`read the logs of sandbox ${sandbox.sandboxId}`, async () => {
    const lines: Array<string> = []
    for await (const entry of sandbox.logs.tail({ entries: 20 })) lines.push(entry.message)
    return lines.join("").trimEnd()
  }, ctx.retry).pipe(Effect.catch((error) => Effect.succeed(`(unreadable: ${error.message})`)))

/** Fails (with the exit code and the server's last output) once the sandbox ended before its server answered. */
const exitedAtStartup = (ctx: ModalContext, sandbox: Sandbox) =>
  Effect.gen(function*() {
    const code = yield* modalCall(`follow sandbox ${sandbox.sandboxId}`, () => sandbox.wait(), ctx.retry)
    const output = yield* lastOutput(ctx, sandbox)
    return yield* new RuntimeStartError({
      message: `The action server in Modal sandbox ${sandbox.sandboxId} exited with code ${code} before it ` +
        `answered. Its last output:\n${output}`
    })
  }).pipe(Effect.mapError(startError))

/** What an ended sandbox's return code says (the SDK's: 124 timeout, 137 terminated, else the command's). */
const endedBecause = (code: number) =>
  code === 124 ? "its timeout ran out" : code === 137 ? "it was terminated" : `its server exited with code ${code}`

/** The sandbox's return code, or undefined while it runs (a failed check is not taken for an answer). */
const returnCode = (ctx: ModalContext, sandbox: Sandbox) =>
  modalCall(`poll sandbox ${sandbox.sandboxId}`, () => sandbox.poll(), ctx.retry).pipe(
    Effect.map((code) => code ?? undefined),
    Effect.catch(() => Effect.succeed(undefined))
  )

/** The disconnect watch: the sandbox ended under the runtime (terminated elsewhere, a timeout, its server died). */
const followSandbox = (ctx: ModalContext, sandbox: Sandbox): NonNullable<ProvisionedSandbox["disconnect"]> => ({
  stopped: returnCode(ctx, sandbox).pipe(
    Effect.repeat({ schedule: Schedule.spaced(GONE_CHECK_EVERY), until: (code) => code !== undefined }),
    Effect.asVoid
  ),
  explain: returnCode(ctx, sandbox).pipe(
    Effect.map((code): Disconnect | undefined =>
      code === undefined
        ? undefined
        : { outOfMemory: false, message: `Modal sandbox ${sandbox.sandboxId} ended: ${endedBecause(code)}` }
    )
  )
})

/**
 * The owner's heartbeat: a request through the tunnel every third of the idle timeout, which
 * Modal counts as activity, so the sandbox idles (and ends) only once its owner is gone.
 */
const keepBusy = (baseUrl: string, idleTimeoutMs: number) =>
  Effect.tryPromise(() => fetch(`${baseUrl}/alive`).then((response) => response.arrayBuffer())).pipe(
    Effect.catch((error) => Effect.logDebug(`ModalRuntime heartbeat: ${String(error)}`)),
    Effect.delay(Duration.millis(Math.floor(idleTimeoutMs / 3))),
    Effect.forever,
    Effect.forkScoped
  )

/**
 * Start (or attach to) the sandbox of a session, in the current scope, until its server was
 * started (the builder waits for it to answer).
 */
const startSandbox = (ctx: ModalContext) =>
  Effect.gen(function*() {
    const { options } = ctx
    const sessionId = options.sessionId ?? randomUUID()
    const existing = options.sessionId === undefined ? undefined : yield* findSession(ctx, sessionId)
    let sandbox: Sandbox
    let sessionKey: string
    if (existing !== undefined) {
      ;({ sandbox, sessionKey } = existing)
      if (!ctx.sandbox.keepRuntimeAlive) yield* Effect.addFinalizer(() => terminate(sandbox, ctx.retry))
    } else {
      sessionKey = randomBytes(24).toString("base64url")
      sandbox = yield* createSandbox(ctx, sessionId, sessionKey)
    }
    const tunnels = yield* modalCall(`get the tunnels of sandbox ${sandbox.sandboxId}`, () =>
      sandbox.tunnels(), ctx.retry)
    const tunnelUrl = (port: number) => {
      const tunnel = tunnels[port]
      return tunnel === undefined
        ? Effect.fail(
          new RuntimeStartError({ message: `Modal sandbox ${sandbox.sandboxId} has no tunnel to port ${port}` })
        )
        : Effect.succeed(tunnel.url)
    }
    const baseUrl = yield* tunnelUrl(SERVER_PORT)
    const apps = yield* Effect.forEach(
      options.appPorts ?? [],
      (port) =>
        Effect.map(tunnelUrl(port), (url) =>
          [`app-${port}`, url] as const)
    )
    // VS Code's own tunnel, as the server's: a sandbox attached to without one cannot give the IDE asked for.
    const vscodeBase = options.vscode === true ? yield* tunnelUrl(VSCODE_PORT) : undefined
    const sessionApiKey = Redacted.make(sessionKey)
    yield* keepBusy(baseUrl, ctx.idleTimeoutMs)
    return {
      id: sessionId,
      baseUrl,
      sessionApiKey,
      workspace: WORKSPACE,
      urls: Object.fromEntries(apps),
      ...(vscodeBase === undefined
        ? {}
        : { handOver: vscodeUrls(options, { baseUrl, sessionApiKey, workspace: WORKSPACE }, vscodeBase) }),
      capabilities: toolCapabilities(options, { pause: false }),
      aliveTimeout: "90 seconds",
      startFailure: exitedAtStartup(ctx, sandbox),
      disconnect: followSandbox(ctx, sandbox)
    } satisfies ProvisionedSandbox
  }).pipe(Effect.mapError(startError))

/** A Redacted option, else the variable through Effect Config; neither is an InvalidOptionsError naming both. */
const secretOf = (given: Redacted.Redacted<string> | undefined, option: string, variable: string) =>
  given !== undefined ? Effect.succeed(given) : Config.option(Config.Redacted(variable)).pipe(
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.fail(
          new InvalidOptionsError({
            message: `ModalRuntime options: no ${option} given and ${variable} is not set (a Modal token: ` +
              "`modal token new`, or the dashboard's API tokens)."
          })
        ),
      onSome: Effect.succeed
    }))
  )

/** A duration option in whole seconds (Modal takes no fractions), at least `min` seconds. */
const wholeSeconds = (name: string, value: Duration.Input, min: number) => {
  const ms = Duration.toMillis(Duration.fromInputUnsafe(value))
  return ms % 1000 === 0 && ms >= min * 1000 ? Effect.succeed(ms) : Effect.fail(
    new InvalidOptionsError({
      message: `ModalRuntime options: ${name} must be whole seconds, at least ${min} (Modal counts in seconds).`
    })
  )
}

const positive = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0)

/** The options Modal would refuse or this runtime cannot honour, refused before anything is made. */
const checkOptions = Effect.fn("ModalRuntime.checkOptions")(function*(options: ModalRuntimeOptions) {
  yield* checkRuntimeOptions("ModalRuntime options", options)
  yield* refuseHostWorkspace("ModalRuntime", "a Modal sandbox", options)
  if (options.image !== undefined && options.registryImage !== undefined) {
    return yield* new InvalidOptionsError({
      message: "ModalRuntime options: give image (a published Modal image) or registryImage, not both."
    })
  }
  if (!positive(options.cpu) || !positive(options.memoryMiB)) {
    return yield* new InvalidOptionsError({ message: "ModalRuntime options: cpu and memoryMiB must be positive." })
  }
  return {
    timeoutMs: yield* wholeSeconds("timeout", options.timeout ?? "24 hours", 1),
    idleTimeoutMs: yield* wholeSeconds("idleTimeout", options.idleTimeout ?? "5 minutes", 3)
  }
})

/**
 * The Modal provisioner for one layer or pool: options checked, the client made, the app and image
 * looked up (a bad token or a missing image fails here, before any sandbox), the reaper started,
 * then a sandbox per `provision`.
 */
const modalProvisioner = (options: ModalRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    const { timeoutMs, idleTimeoutMs } = yield* checkOptions(options)
    const connection: ModalConnection = {
      tokenId: yield* secretOf(options.tokenId, "tokenId", "MODAL_TOKEN_ID"),
      tokenSecret: yield* secretOf(options.tokenSecret, "tokenSecret", "MODAL_TOKEN_SECRET"),
      environment: options.environment,
      serverUrl: options.serverUrl
    }
    const client = yield* modalClient(connection)
    const retry = options.rateLimitRetry ?? MODAL_RATE_LIMIT_RETRY
    const appName = options.app ?? DEFAULT_APP
    const app = yield* modalCall(
      `look up app ${appName}`,
      () => client.apps.fromName(appName, { createIfMissing: true }),
      retry
    )
    const imageName = options.registryImage ?? options.image ?? DEFAULT_IMAGE
    const image = yield* modalCall(
      `look up image ${imageName}`,
      () =>
        options.registryImage === undefined
          ? client.images.fromName(imageName)
          : client.images.fromRegistry(imageName).build(app),
      retry
    )
    yield* startReaper(client, app, retry, options.reapEvery ?? "60 seconds")
    const ctx: ModalContext = { client, app, image, imageName, options, sandbox, timeoutMs, idleTimeoutMs, retry }
    return { kind: "modal", provision: () => startSandbox(ctx) } satisfies Provisioner
  }).pipe(Effect.mapError((error) => error instanceof ModalError ? startError(error) : error))

/** Warm Modal sandboxes waiting for a runtime. */
export class ModalSandboxPool extends Context.Service<ModalSandboxPool, ProvisionedPool>()(
  "effect-sandbox/ModalSandboxPool"
) {}

export const ModalRuntime = {
  /** A runtime in a Modal sandbox (created, or attached to by session id); terminated on release unless kept alive. */
  layer: (
    options: ModalRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(options, modalProvisioner(options)),

  /** Keep `warmSandboxes` sandboxes started (server alive) in the background, for `layerWarm`. */
  layerPool: (
    options: ModalRuntimeOptions & { readonly warmSandboxes: number }
  ): Layer.Layer<ModalSandboxPool, RuntimeStartError | InvalidOptionsError | Config.ConfigError> => {
    const { sessionId: _, warmSandboxes, ...shared } = options
    return provisionedPoolLayer(ModalSandboxPool, warmSandboxes, "Modal sandbox", shared, modalProvisioner(shared))
  },

  /** A runtime on a sandbox taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, ModalSandboxPool> => warmLayer(ModalSandboxPool, Effect.succeed)
} as const
