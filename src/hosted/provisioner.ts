/**
 * A driver (services/Driver.ts) turned into the provisioner the runtime builder takes
 * (services/Provisioner.ts): everything a hosted sandbox needs besides its provider's verbs, once.
 * Attach by session id (a paused sandbox resumed, a stopped one started and its server launched
 * again), release under `keepRuntimeAlive`, the owner tags, the keep-alive loop that rests while
 * paused, the start failure with the server's exit code and output, the disconnect watch, the app
 * ports and VS Code's URL, pause and resume as their own error.
 */
import { type Duration, Effect, Redacted, Ref, Schedule, Scope } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { headerRelay } from "../provisioned/headerRelay.ts"
import {
  type ProviderError,
  refusalAsStartError,
  type RuntimeError,
  RuntimePauseError,
  RuntimeStartError
} from "../schema/errors.ts"
import { toolCapabilities, VSCODE_PORT, vscodeUrls } from "../serverStart/serverTools.ts"
import type {
  Driver,
  DriverFailure,
  Endpoint,
  Found,
  Launched,
  Made,
  SandboxSpec,
  SandboxState
} from "../services/Driver.ts"
import type { Disconnect, ProvisionedSandbox } from "../services/Provisioner.ts"
import { reportStart } from "../services/StartProgress.ts"
import type { HostedContext } from "./context.ts"
import type { HostedOptions } from "./options.ts"
import { sandboxTags, TAGS } from "./ownerTags.ts"
import { SERVER_PORT, serverLaunch } from "./serverLaunch.ts"
import { snapshotVerbs } from "./snapshots.ts"
import { serverExitedMessage } from "./startFailure.ts"
import { STOOD_DOWN } from "./startOnce.ts"

const DEFAULT_ALIVE_TIMEOUT: Duration.Input = "60 seconds"
const DEFAULT_WATCH_EVERY: Duration.Input = "5 seconds"
/** How long a failed endpoint waits for the server's exit, which then says why instead. */
const EXIT_GRACE: Duration.Input = "5 seconds"

/** The spec of the session's sandbox. */
const specOf = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  sessionId: string,
  sessionKey: Redacted.Redacted<string>,
  onStatus: SandboxSpec["onStatus"]
): SandboxSpec => {
  const { options } = ctx
  const user = {
    name: options.user ?? ctx.driver.user.name,
    // The driver's own user (by name: a driver may have resolved the options' already) has its id.
    id: options.userId ??
      (options.user === undefined || options.user === ctx.driver.user.name ? ctx.driver.user.id : 1000)
  }
  return {
    sessionId,
    sessionKey,
    tags: sandboxTags({ sessionId, sessionKey: Redacted.value(sessionKey), keepAlive: ctx.sandbox.keepRuntimeAlive }),
    keepAlive: ctx.sandbox.keepRuntimeAlive,
    server: serverLaunch(options, ctx.sandbox, sessionId, user, ctx.driver.serverPort),
    user,
    ports: [...(options.vscode === true ? [VSCODE_PORT] : []), ...(options.appPorts ?? [])],
    sandbox: ctx.sandbox,
    onStatus,
    ...(ctx.fromSnapshot === undefined ? {} : { fromSnapshot: ctx.fromSnapshot })
  }
}

/**
 * Destroy the sandbox on release unless it is kept alive, then only `retain` it where the driver
 * says how (a failure is logged: release never fails).
 */
const releaseWith = <O extends HostedOptions, S>(ctx: HostedContext<O, S>, made: Made<S>) => {
  const kept = ctx.sandbox.keepRuntimeAlive
  const step = kept ? ctx.driver.retain?.(made.sandbox) : ctx.driver.destroy(made.sandbox)
  return Effect.addFinalizer(() =>
    step === undefined ? Effect.void : step.pipe(
      Effect.catch((error) => Effect.logWarning(error.message)),
      Effect.withSpan(kept ? "hosted.retain" : "hosted.destroy", {
        attributes: { provider: ctx.provider, sandbox: made.id }
      })
    )
  )
}

/** The session's sandbox if one exists: the first `find` lists with the session's tag and a key. */
const findSession = <O extends HostedOptions, S>(ctx: HostedContext<O, S>, sessionId: string) =>
  ctx.driver.find({ [TAGS.managed]: "true", [TAGS.session]: sessionId }).pipe(
    Effect.map((listed) => listed.find((found) => found.tags[TAGS.sessionKey] !== undefined))
  )

/**
 * An existing sandbox made ready for its session: resumed when paused, started and its server
 * launched again when stopped (its memory, and the server with it, are gone).
 */
const reattach = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  found: Found<S>,
  spec: SandboxSpec
): Effect.Effect<Launched | undefined, RuntimeStartError | ProviderError, Scope.Scope> =>
  Effect.gen(function*() {
    const { driver } = ctx
    yield* releaseWith(ctx, found)
    if (found.state === "gone") {
      return yield* new RuntimeStartError({
        message: `${ctx.provider} ${ctx.noun} ${found.id} of session ${spec.sessionId} is gone.`,
        reason: "other"
      })
    }
    if (found.state === "paused") {
      if (driver.pause === undefined) {
        return yield* new RuntimeStartError({ message: `${ctx.provider} ${ctx.noun} ${found.id} is paused.` })
      }
      yield* driver.pause.resume(found.sandbox)
      // Resumed without its server (only the disk was kept): launched again.
      return driver.pause.relaunch === true ? yield* driver.launch(found.sandbox, spec) : undefined
    }
    if (found.state !== "stopped") return undefined
    if (driver.start === undefined) {
      return yield* new RuntimeStartError({
        message:
          `${ctx.provider} ${ctx.noun} ${found.id} of session ${spec.sessionId} is stopped and cannot be started again.`
      })
    }
    yield* driver.start(found.sandbox)
    return yield* driver.launch(found.sandbox, spec)
  })

/** The disconnect watch: the provider no longer runs the sandbox (gone, or stopped under us). */
const followSandbox = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  made: Made<S>,
  stateOf: NonNullable<Driver<S>["state"]>
): NonNullable<ProvisionedSandbox["disconnect"]> => {
  const { driver } = ctx
  const explain = stateOf(made.sandbox).pipe(
    Effect.map((state: SandboxState): Disconnect | undefined =>
      state._tag === "gone"
        ? { outOfMemory: state.outOfMemory === true, message: state.why }
        : state._tag === "stopped"
        ? { outOfMemory: false, message: state.why ?? `${ctx.provider} ${ctx.noun} ${made.id} was stopped` }
        : undefined
    ),
    // A failed check is not taken for an answer.
    Effect.catch(() => Effect.succeed(undefined))
  )
  return {
    stopped: driver.stopped?.(made.sandbox) ?? explain.pipe(
      Effect.repeat({
        schedule: Schedule.spaced(driver.watchEvery ?? DEFAULT_WATCH_EVERY),
        until: (why) => why !== undefined
      }),
      Effect.asVoid
    ),
    explain
  }
}

/**
 * Fails with the server's exit code and last output once it exits before answering. A start that
 * stood down (`STOOD_DOWN`, startOnce.ts: a copy sent again after a cut, the first copy's server
 * running) is no exit: the `/alive` wait finds that server.
 */
const exitedAtStart = (
  ctx: { readonly provider: string; readonly noun: string },
  made: Made<unknown>,
  launched: Launched
) =>
  launched.serverExit === undefined ? undefined : launched.serverExit.pipe(
    Effect.flatMap((exit) =>
      exit.exitCode === STOOD_DOWN ? Effect.never : Effect.fail(
        new RuntimeStartError({
          message: serverExitedMessage({ provider: ctx.provider, sandboxNoun: ctx.noun, sandboxId: made.id, ...exit }),
          reason: "server-exited",
          exitCode: exit.exitCode,
          output: exit.output
        })
      )
    ),
    Effect.mapError(refusalAsStartError)
  )

/** Pause or resume through the driver, as the runtime's own error kind. */
const pauseStep = (
  provider: string,
  operation: "pause" | "resume",
  step: Effect.Effect<void, DriverFailure>
): Effect.Effect<void, RuntimeError> =>
  step.pipe(
    Effect.mapError((error) =>
      new RuntimePauseError({
        operation,
        ...(error._tag === "ProviderError" ? { provider: error } : {}),
        message: error.message
      })
    ),
    Effect.withSpan(`hosted.${operation}`, { attributes: { provider } })
  )

/** Pause and resume of a sandbox its provider will not pause (`pause.refusal`): refused at once, saying why. */
const refusedPause = (why: string) => ({
  pause: Effect.fail(new RuntimePauseError({ operation: "pause", message: why })),
  resume: Effect.fail(new RuntimePauseError({ operation: "resume", message: why }))
})

/** The server's endpoint, the app ports' URLs and the driver's own. */
const endpoints = <S>(driver: Driver<S>, sandbox: S, appPorts: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const server: Endpoint = yield* driver.endpoint(sandbox, driver.serverPort ?? SERVER_PORT, "server")
    const apps = yield* Effect.forEach(
      [...appPorts, ...(driver.exposedPorts?.(sandbox) ?? [])],
      (port) => Effect.map(driver.endpoint(sandbox, port, "app"), (app) => [`app-${port}`, app.url] as const)
    )
    return {
      server,
      urls: {
        ...(server.shown === undefined ? {} : { actionServer: server.shown }),
        ...Object.fromEntries(apps),
        ...driver.urls?.(sandbox).urls
      }
    }
  })

/** The VS Code link opened from the driver's other bases too (`ide`): the same token and folder. */
const withIdeBases = (urls: Record<string, string>, ide: Readonly<Record<string, string>> | undefined) =>
  ide === undefined || urls["vscode"] === undefined ? urls : {
    ...urls,
    ...Object.fromEntries(
      Object.entries(ide).map(([name, base]) => [name, `${base}/${new URL(urls["vscode"]!).search}`])
    )
  }

/**
 * Start (or attach to) the sandbox of a session, in the current scope, until its server was started
 * (the builder waits for it to answer, raced against its exit).
 */
export const provisionHosted = <O extends HostedOptions, S>(
  ctx: HostedContext<O, S>,
  onStatus: SandboxSpec["onStatus"]
): Effect.Effect<ProvisionedSandbox, RuntimeStartError, Scope.Scope> =>
  Effect.gen(function*() {
    const { driver, options, provider } = ctx
    const sessionId = options.sessionId ?? randomUUID()
    const found = options.sessionId === undefined ? undefined : yield* findSession(ctx, sessionId)
    if (found === undefined && ctx.attachOnly) {
      return yield* new RuntimeStartError({
        message: `${provider} has no ${ctx.noun} of session ${sessionId} to attach to.`,
        reason: "other"
      })
    }
    const sessionKey = Redacted.make(found?.tags[TAGS.sessionKey] ?? randomBytes(24).toString("base64url"))
    const spec = specOf(ctx, sessionId, sessionKey, onStatus)
    const paused = yield* Ref.make(false)
    const scope = yield* Effect.scope
    let made: Made<S>
    let launched: Launched | undefined
    if (found !== undefined) {
      made = found
      launched = yield* reattach(ctx, found, spec)
    } else {
      yield* reportStart({ phase: "creating", detail: `the ${provider} ${ctx.noun}` })
      // Made and its release registered without a gap: an interrupted start still removes it.
      made = yield* Effect.uninterruptible(
        driver.create(spec).pipe(Effect.tap((fresh) => releaseWith(ctx, fresh)))
      ).pipe(Effect.withSpan("hosted.create", { attributes: { provider } }))
    }
    if (driver.keepAlive !== undefined) {
      // Started before the server is: a slow start must not outlast a short provider time-out. Kept
      // alive on release or not, the sandbox is renewed while its runtime lives, and no longer after.
      const { every, touch } = driver.keepAlive
      const renew = touch(made.sandbox).pipe(
        Effect.catch((error) => Effect.logWarning(error.message)),
        Effect.withSpan("hosted.keepAlive", { attributes: { provider } })
      )
      yield* Ref.get(paused).pipe(
        Effect.flatMap((isPaused) => isPaused ? Effect.void : renew),
        Effect.delay(every),
        Effect.forever,
        Effect.forkScoped
      )
    }
    if (found === undefined) {
      yield* reportStart({ phase: "starting-server", detail: `in ${ctx.noun} ${made.id}` })
      launched = yield* driver.launch(made.sandbox, spec)
    }
    const startFailure = launched === undefined ? undefined : exitedAtStart(ctx, made, launched)
    // A server that died at once may take its ports with it (an exited container publishes none):
    // its exit, when it comes soon, is the start's failure rather than the missing port.
    const { server, urls } = yield* endpoints(driver, made.sandbox, options.appPorts ?? []).pipe(
      Effect.catch((error) =>
        startFailure === undefined
          ? Effect.fail(error)
          : startFailure.pipe(Effect.timeoutOption(EXIT_GRACE), Effect.andThen(Effect.fail(error)))
      )
    )
    const workspace = launched?.workspace ?? found?.workspace ??
      (found === undefined || driver.workspace === undefined ? "/workspace" : yield* driver.workspace(made.sandbox))
    const key = made.sessionKey ?? sessionKey
    const { pause, state, serverError } = driver
    const pauseRefused = pause?.refusal?.(made.sandbox)
    return {
      id: sessionId,
      baseUrl: server.url,
      sessionApiKey: key,
      ...(server.headers === undefined ? {} : { headers: server.headers }),
      workspace,
      urls,
      capabilities: toolCapabilities(options, {
        pause: pause !== undefined && pauseRefused === undefined,
        snapshot: driver.snapshot !== undefined && driver.snapshot.unsupported === undefined &&
          driver.snapshot.refusal?.(made.sandbox) === undefined
      }),
      aliveTimeout: options.aliveTimeout ?? driver.aliveTimeout ?? DEFAULT_ALIVE_TIMEOUT,
      ...(startFailure === undefined ? {} : { startFailure }),
      ...(launched?.listening === undefined ? {} : { listening: launched.listening }),
      ...(pause === undefined ? {} : pauseRefused !== undefined ? refusedPause(pauseRefused) : {
        // Suspended: each pause asks the driver anew (a driver may decide when called, not when built).
        pause: pauseStep(provider, "pause", Effect.suspend(() => pause.pause(made.sandbox))).pipe(
          Effect.andThen(Ref.set(paused, true))
        ),
        // A sandbox resumed without its server (`relaunch`): launched again, in the runtime's scope.
        resume: pauseStep(
          provider,
          "resume",
          Effect.suspend(() =>
            pause.relaunch === true
              ? Effect.andThen(pause.resume(made.sandbox), Scope.provide(driver.launch(made.sandbox, spec), scope))
              : pause.resume(made.sandbox)
          )
        ).pipe(Effect.andThen(Ref.set(paused, false)))
      }),
      ...snapshotVerbs(ctx, made.sandbox, sessionId, scope, provisionHosted),
      ...(state === undefined ? {} : { disconnect: followSandbox(ctx, made, state) }),
      ...(serverError === undefined ? {} : { serverError: serverError(made.sandbox, ctx.sandbox.keepRuntimeAlive) }),
      handOver: Effect.gen(function*() {
        if (launched?.started !== undefined) yield* launched.started
        if (options.vscode !== true) return {}
        // Asked for when handed over, so a signed link lives its whole expiry in its runtime.
        // A proxy that wants headers (Runloop's tunnel token) is reached through a loopback relay
        // adding them, living with the runtime: a browser cannot send them.
        const ide = yield* driver.endpoint(made.sandbox, VSCODE_PORT, "vscode").pipe(
          Effect.flatMap((endpoint) =>
            endpoint.headers === undefined
              ? Effect.succeed(endpoint)
              : Effect.map(headerRelay(endpoint.url, endpoint.headers), (url) => ({ ...endpoint, url }))
          ),
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`${provider}: no VS Code URL: ${error.message}`), undefined)
          )
        )
        const ideUrls = yield* vscodeUrls(
          options,
          { baseUrl: server.url, sessionApiKey: key, workspace },
          ide?.url,
          ide?.path
        )
        return withIdeBases(ideUrls, driver.urls?.(made.sandbox).ide)
      })
    } satisfies ProvisionedSandbox
  }).pipe(
    Effect.mapError(refusalAsStartError),
    Effect.withSpan("hosted.provision", { attributes: { provider: ctx.provider } })
  )
