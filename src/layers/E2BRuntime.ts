/**
 * E2BRuntime: the action server in an E2B sandbox (a Firecracker microVM), through the official
 * `e2b` SDK, reached over E2B's port exposure (`getHost(port)`) with the shared HTTP client.
 *
 * Each sandbox is created from a template (default: one made from the runtime image, see
 * docs/runtimes/e2b.md) with a server-side timeout that the owner renews while it lives, so a
 * crashed owner's sandbox dies on E2B's side; its session, owner and key are in its metadata, so a
 * later layer attaches by session id and a reaper kills the sandboxes of dead owners (paused ones
 * included, which have no timeout). The session key reaches the server as a file it reads and
 * removes (server/sessionKey.ts), never in an environment sandboxed commands can read. VS Code,
 * when asked for, is reached as the server is, at E2B's public URL of its port.
 */
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { RuntimeSchedules } from "../client/policies.ts"
import { SESSION_KEY_FILE_VARIABLE } from "../executor/childEnv.ts"
import { shellQuote } from "../executor/env.ts"
import { checkRuntimeOptions, refuseHostWorkspace, restrictsToWorkspace, startupEnv } from "../runtime/options.ts"
import { InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { serverCommand, serverEnv } from "../server/commandLine.ts"
import type { Disconnect, ProvisionedSandbox, Provisioner } from "../services/Provisioner.ts"
import type { Runtime, WhilePaused } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { E2B_RATE_LIMIT_RETRY } from "./e2b/rateLimit.ts"
import { startReaper } from "./e2b/reaper.ts"
import { e2bCall, type E2BConnection, E2BError, type E2BSandbox, type E2BSdk, loadE2B, sdkOptions } from "./e2b/sdk.ts"
import { serverFiles } from "./e2b/serverFiles.ts"
import { pollDisconnect } from "./internal/disconnectPoll.ts"
import { METADATA, sandboxMetadata } from "./internal/ownerMetadata.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import type { ServerFiles } from "./internal/serverProbe.ts"
import { toolCapabilities, VSCODE_PORT, vscodeEnv, vscodeUrls } from "./internal/serverTools.ts"

/**
 * The shared options (services/RuntimeOptions.ts) and E2B's own. `workspace` (a directory on this
 * machine) does not apply: the sandbox has its own /workspace, filled with `copyTo`.
 */
export interface E2BRuntimeOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The team's API key (default: the `E2B_API_KEY` environment variable, through Effect Config). */
  readonly apiKey?: Redacted.Redacted<string>
  /** Template name or id (default `effect-sandbox-runtime`: made from the runtime image, docs/runtimes/e2b.md). */
  readonly template?: string
  /**
   * When the template lacks the payload, upload it and run it with the template's Node (22.19+)
   * (default true; false: such a template is a start error).
   */
  readonly uploadPayload?: boolean
  /** The SDK's connection options (default: theirs, from `E2B_DOMAIN`, `E2B_API_URL`, `E2B_SANDBOX_URL`). */
  readonly domain?: string
  readonly apiUrl?: string
  readonly sandboxUrl?: string
  readonly requestTimeoutMs?: number
  /**
   * The URL of a sandbox host (`getHost(port)`: `<port>-<sandboxId>.<domain>`), default
   * `https://<host>`; a proxy or a self-hosted cluster without wildcard DNS may map it elsewhere.
   */
  readonly hostUrl?: (host: string) => string
  /**
   * E2B's server-side timeout: set on create, renewed every third of it while the owner lives
   * (default 10 minutes; Hobby accounts allow at most 1 hour, Pro 24).
   */
  readonly timeout?: Duration.Input
  /** The sandbox user the server and commands run as, and its uid (default E2B's `user`, 1000). */
  readonly user?: string
  readonly userId?: number
  /** Extra ports reported in `info.urls` as `app-<port>` (reached through E2B's port exposure). */
  readonly appPorts?: ReadonlyArray<number>
  /**
   * VS Code (services/RuntimeOptions.ts), in a template that has code-server (made from the tools
   * image: docs/runtimes/e2b.md). `info.urls.vscode` is E2B's public URL of its port, as for
   * `appPorts`, with the connection token that guards it.
   */
  readonly vscode?: boolean
  /** How often the reaper looks for sandboxes of dead owners on this host (default 60 s). */
  readonly reapEvery?: Duration.Input
  /** Retries of rate-limited calls (E2B's 429; default `E2B_RATE_LIMIT_RETRY`). */
  readonly rateLimitRetry?: Schedule.Schedule<unknown>
  readonly schedules?: RuntimeSchedules
  readonly whilePaused?: WhilePaused
}

const WORKSPACE = "/workspace"
const SERVER_PORT = 8000
const DEFAULT_TEMPLATE = "effect-sandbox-runtime"
/** Where an uploaded payload goes (the fallback for templates without it). */
const UPLOAD_DIR = "/opt/effect-sandbox-upload/payload"
/** How often a running sandbox is checked for having gone (killed, timed out). */
const GONE_CHECK_EVERY = "5 seconds"

/** What one layer's sandboxes share: the SDK, where it goes, and the options read once. */
interface E2BContext {
  readonly sdk: E2BSdk
  readonly connection: E2BConnection
  readonly options: E2BRuntimeOptions
  readonly sandbox: SandboxConfig
  readonly template: string
  readonly timeoutMs: number
  readonly user: string
  readonly retry: Schedule.Schedule<unknown>
}

/** An SDK failure while starting, as the start's error (E2B's own text in it). */
const startError = (error: E2BError | RuntimeStartError) =>
  error instanceof E2BError ? new RuntimeStartError({ message: error.message }) : error

/** The sandbox of a session that exists already (running or paused), connected (resumed) and with its key. */
const findSession = Effect.fn("E2BRuntime.findSession")(function*(ctx: E2BContext, sessionId: string) {
  const paginator = ctx.sdk.Sandbox.list({
    ...sdkOptions(ctx.connection),
    query: { metadata: { [METADATA.managed]: "true", [METADATA.session]: sessionId } }
  })
  const page = yield* e2bCall(`look for the sandbox of session ${sessionId}`, () => paginator.nextItems(), ctx.retry)
  const listed = page[0]
  const key = listed?.metadata[METADATA.sessionKey]
  if (listed === undefined || key === undefined) return undefined
  const sandbox = yield* e2bCall(
    `connect to sandbox ${listed.sandboxId}`,
    () => ctx.sdk.Sandbox.connect(listed.sandboxId, { ...sdkOptions(ctx.connection), timeoutMs: ctx.timeoutMs }),
    ctx.retry
  )
  return { sandbox, sessionKey: key }
})

/** A new sandbox of the template, with its timeout and our metadata, killed with the scope unless kept alive. */
const createSandbox = (ctx: E2BContext, sessionId: string, sessionKey: string) =>
  Effect.acquireRelease(
    e2bCall(
      `create a sandbox from template ${ctx.template}`,
      () =>
        ctx.sdk.Sandbox.create(ctx.template, {
          ...sdkOptions(ctx.connection),
          timeoutMs: ctx.timeoutMs,
          metadata: sandboxMetadata({ sessionId, sessionKey, keepAlive: ctx.sandbox.keepRuntimeAlive })
        }),
      ctx.retry
    ),
    (sandbox) => ctx.sandbox.keepRuntimeAlive ? Effect.void : killSandbox(ctx, sandbox.sandboxId)
  )

const killSandbox = (ctx: E2BContext, sandboxId: string) =>
  e2bCall(`kill sandbox ${sandboxId}`, () => ctx.sdk.Sandbox.kill(sandboxId, sdkOptions(ctx.connection)), ctx.retry)
    .pipe(Effect.catch((error) => Effect.logWarning(error.message)))

/**
 * Start the server in the background through the SDK's commands: the key first written as a file
 * (read and removed by the server), the server pointed at it. The command's handle follows it.
 */
const startServer = Effect.fn("E2BRuntime.startServer")(function*(input: {
  readonly ctx: E2BContext
  readonly sandbox: E2BSandbox
  readonly files: ServerFiles
  readonly sessionId: string
  readonly sessionKey: string
}) {
  const { ctx, sandbox } = input
  const { options, user } = ctx
  yield* e2bCall(
    `create ${WORKSPACE} for ${user}`,
    () => sandbox.commands.run(`mkdir -p ${WORKSPACE} && chown ${shellQuote(user)} ${WORKSPACE}`, { user: "root" }),
    ctx.retry
  )
  const keyFile = `/tmp/effect-sandbox-session-key-${randomBytes(8).toString("hex")}`
  yield* e2bCall(
    "write the session key file",
    () => sandbox.files.write(keyFile, input.sessionKey, { user }),
    ctx.retry
  )
  const command = serverCommand({
    node: input.files.node,
    entry: input.files.entry,
    port: SERVER_PORT,
    workingDir: WORKSPACE,
    // Reached from outside the VM through E2B's port exposure: all interfaces, behind the key.
    host: "0.0.0.0",
    username: user,
    userId: options.userId ?? 1000,
    tools: options,
    restrictToWorkspace: restrictsToWorkspace(options)
  })
  const envs = serverEnv({
    env: startupEnv(ctx.sandbox, options),
    tools: options,
    sessionId: input.sessionId,
    noChangeTimeoutSeconds: options.noChangeTimeoutSeconds ?? 10,
    extra: { [SESSION_KEY_FILE_VARIABLE]: keyFile, ...vscodeEnv(options) }
  })
  return yield* e2bCall(
    "start the action server",
    () =>
      sandbox.commands.run(command.map(shellQuote).join(" "), {
        background: true,
        user,
        cwd: WORKSPACE,
        envs,
        // The server runs as long as the sandbox: no deadline on its stream.
        timeoutMs: 0
      }),
    ctx.retry
  )
})

type ServerHandle = Effect.Success<ReturnType<typeof startServer>>

/** Fails (with the exit code and the server's last output) when the server exits before answering. */
const exitedAtStartup = (handle: ServerHandle, sandboxId: string) =>
  Effect.gen(function*() {
    const result = yield* Effect.promise(() =>
      handle.wait().then(
        (done) => ({ exitCode: done.exitCode, output: `${done.stdout}${done.stderr}` }),
        (error: { exitCode?: number; stdout?: string; stderr?: string; message?: string }) => ({
          exitCode: error.exitCode ?? -1,
          output: error.stderr !== undefined ? `${error.stdout ?? ""}${error.stderr}` : String(error.message)
        })
      )
    )
    const tail = result.output.trim().split("\n").slice(-20).join("\n")
    return yield* new RuntimeStartError({
      message: `The action server in E2B sandbox ${sandboxId} exited with code ${result.exitCode} before it ` +
        `answered. Its last output:\n${tail}`
    })
  })

/** Whether E2B still has the sandbox (a failed check is not taken for an answer). */
const sandboxGone = (ctx: E2BContext, sandboxId: string) =>
  e2bCall("look up the sandbox", () => ctx.sdk.Sandbox.getInfo(sandboxId, sdkOptions(ctx.connection)), ctx.retry).pipe(
    Effect.as(false),
    Effect.catch((error) => Effect.succeed(error.kind === "not-found"))
  )

/** The disconnect watch: E2B no longer has the sandbox (killed elsewhere, or its timeout ran out). */
const followSandbox = (ctx: E2BContext, sandboxId: string) => {
  const gone: Disconnect = {
    outOfMemory: false,
    message: `E2B no longer has sandbox ${sandboxId} (killed, or its timeout ran out)`
  }
  return pollDisconnect(
    sandboxGone(ctx, sandboxId).pipe(Effect.map((isGone) => isGone ? gone : undefined)),
    GONE_CHECK_EVERY
  )
}

/**
 * Start (or attach to) the sandbox of a session, in the current scope, until its server was
 * started (the builder waits for it to answer).
 */
const startSandbox = (ctx: E2BContext) =>
  Effect.gen(function*() {
    const { options } = ctx
    const sessionId = options.sessionId ?? randomUUID()
    const existing = options.sessionId === undefined ? undefined : yield* findSession(ctx, sessionId)
    let sandbox: E2BSandbox
    let sessionKey: string
    let handle: ServerHandle | undefined
    if (existing !== undefined) {
      ;({ sandbox, sessionKey } = existing)
      if (!ctx.sandbox.keepRuntimeAlive) yield* Effect.addFinalizer(() => killSandbox(ctx, sandbox.sandboxId))
    } else {
      sessionKey = randomBytes(24).toString("base64url")
      sandbox = yield* createSandbox(ctx, sessionId, sessionKey)
    }
    const sandboxId = sandbox.sandboxId
    const hostUrl = options.hostUrl ?? ((host: string) => `https://${host}`)
    const baseUrl = hostUrl(sandbox.getHost(SERVER_PORT))

    // E2B kills the sandbox when its timeout runs out: renewed while we live, not while paused
    // (E2B stops the clock then; `connect` restarts it).
    let paused = false
    const renew = e2bCall(
      `renew the timeout of sandbox ${sandboxId}`,
      () => ctx.sdk.Sandbox.setTimeout(sandboxId, ctx.timeoutMs, sdkOptions(ctx.connection)),
      ctx.retry
    ).pipe(Effect.catch((error) => Effect.logWarning(error.message)))
    yield* Effect.suspend(() => paused ? Effect.void : renew).pipe(
      Effect.delay(Duration.divideUnsafe(Duration.millis(ctx.timeoutMs), 3)),
      Effect.forever,
      Effect.forkScoped
    )
    // The server starts after the renewal does: a slow start (a loaded machine, a slow probe) must
    // not outlast a short timeout.
    if (existing === undefined) {
      const files = yield* serverFiles({
        sandbox,
        template: ctx.template,
        user: ctx.user,
        upload: options.uploadPayload ?? true,
        uploadDir: UPLOAD_DIR,
        retry: ctx.retry
      })
      handle = yield* startServer({ ctx, sandbox, files, sessionId, sessionKey })
    }
    const asRuntimeError = Effect.mapError((error: E2BError) => new RuntimeStartError({ message: error.message }))
    const sessionApiKey = Redacted.make(sessionKey)
    return {
      id: sessionId,
      baseUrl,
      sessionApiKey,
      workspace: WORKSPACE,
      urls: Object.fromEntries((options.appPorts ?? []).map((p) => [`app-${p}`, hostUrl(sandbox.getHost(p))])),
      capabilities: toolCapabilities(options, { pause: true }),
      aliveTimeout: "60 seconds",
      ...(handle === undefined ? {} : { startFailure: exitedAtStartup(handle, sandboxId) }),
      pause: e2bCall(
        `pause sandbox ${sandboxId}`,
        () => ctx.sdk.Sandbox.pause(sandboxId, { ...sdkOptions(ctx.connection), keepMemory: true }),
        ctx.retry
      ).pipe(Effect.tap(() => Effect.sync(() => paused = true)), Effect.asVoid, asRuntimeError),
      resume: e2bCall(
        `resume sandbox ${sandboxId}`,
        () => ctx.sdk.Sandbox.connect(sandboxId, { ...sdkOptions(ctx.connection), timeoutMs: ctx.timeoutMs }),
        ctx.retry
      ).pipe(Effect.tap(() => Effect.sync(() => paused = false)), Effect.asVoid, asRuntimeError),
      disconnect: followSandbox(ctx, sandboxId),
      handOver: Effect.gen(function*() {
        // Once handed over, the server's output is let go: the SDK's handle would keep all of it in
        // this process's memory for the sandbox's life. The server runs on (envd does not stop a
        // process whose client went away); what it prints afterwards is not kept anywhere.
        if (handle !== undefined) yield* Effect.promise(() => handle.disconnect())
        // VS Code's port is reached as every port of the sandbox is: E2B's public URL of it.
        return yield* vscodeUrls(
          options,
          { baseUrl, sessionApiKey, workspace: WORKSPACE },
          hostUrl(sandbox.getHost(VSCODE_PORT))
        )
      })
    } satisfies ProvisionedSandbox
  }).pipe(Effect.mapError(startError))

/** The API key: the option, else `E2B_API_KEY`; neither is an InvalidOptionsError saying so. */
const apiKeyOf = (options: E2BRuntimeOptions) =>
  options.apiKey !== undefined ? Effect.succeed(options.apiKey) : Config.option(Config.Redacted("E2B_API_KEY")).pipe(
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.fail(
          new InvalidOptionsError({
            message: "E2BRuntime options: no apiKey given and E2B_API_KEY is not set (an E2B team API key, e2b_...)."
          })
        ),
      onSome: Effect.succeed
    }))
  )

/**
 * The E2B provisioner for one layer or pool: options checked, the SDK loaded, the reaper started,
 * then a sandbox per `provision`.
 */
const e2bProvisioner = (options: E2BRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    yield* checkRuntimeOptions("E2BRuntime options", options)
    yield* refuseHostWorkspace("E2BRuntime", "an E2B sandbox", options)
    const timeout = Duration.fromInputUnsafe(options.timeout ?? "10 minutes")
    if (Duration.toMillis(timeout) < 3_000) {
      return yield* new InvalidOptionsError({
        message: "E2BRuntime options: timeout must be at least 3 seconds (it is renewed every third of it)."
      })
    }
    const connection: E2BConnection = {
      apiKey: yield* apiKeyOf(options),
      domain: options.domain,
      apiUrl: options.apiUrl,
      sandboxUrl: options.sandboxUrl,
      requestTimeoutMs: options.requestTimeoutMs
    }
    const sdk = yield* loadE2B
    const retry = options.rateLimitRetry ?? E2B_RATE_LIMIT_RETRY
    yield* startReaper(sdk, connection, retry, options.reapEvery ?? "60 seconds")
    const ctx: E2BContext = {
      sdk,
      connection,
      options,
      sandbox,
      template: options.template ?? DEFAULT_TEMPLATE,
      timeoutMs: Duration.toMillis(timeout),
      user: options.user ?? "user",
      retry
    }
    return { kind: "e2b", provision: () => startSandbox(ctx) } satisfies Provisioner
  })

/** Warm E2B sandboxes waiting for a runtime. */
export class E2BSandboxPool extends Context.Service<E2BSandboxPool, ProvisionedPool>()(
  "effect-sandbox/E2BSandboxPool"
) {}

export const E2BRuntime = {
  /** A runtime in an E2B sandbox (created, or attached to by session id); killed on release unless kept alive. */
  layer: (
    options: E2BRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    provisionedLayer(options, e2bProvisioner(options)),

  /** Keep `warmSandboxes` sandboxes started (server alive) in the background, for `layerWarm`. */
  layerPool: (
    options: E2BRuntimeOptions & { readonly warmSandboxes: number }
  ): Layer.Layer<E2BSandboxPool, RuntimeStartError | InvalidOptionsError | Config.ConfigError> => {
    const { sessionId: _, warmSandboxes, ...shared } = options
    return provisionedPoolLayer(E2BSandboxPool, warmSandboxes, "E2B sandbox", shared, e2bProvisioner(shared))
  },

  /** A runtime on a sandbox taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, E2BSandboxPool> => warmLayer(E2BSandboxPool, Effect.succeed)
} as const
