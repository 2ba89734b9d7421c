/**
 * The E2B driver (services/Driver.ts): a sandbox is made from a template with a server-side
 * time-out the owner renews within E2B's cap on its life (lifetime.ts), the action server started
 * through the SDK's commands with its key's digest in its environment (hosted/serverLaunch.ts), E2B's port exposure for every port, and pause with memory, checked
 * (E2B's 409 to a pause in a transition reads as "already paused" in the SDK). E2B's metadata
 * holds the owner tags.
 * Snapshots are E2B's (snapshot.ts); a sandbox made from one is rebooted without the snapshot's
 * memory before its server starts, so it answers only to its own key.
 */
import type { Sandbox } from "e2b"
import { Clock, Duration, Effect, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { listeningLine } from "../../hosted/listeningLine.ts"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential, unsupported } from "../../hosted/options.ts"
import {
  IMAGE_SERVER_FOUND,
  IMAGE_WORKSPACE as WORKSPACE,
  imageServerLine,
  NO_IMAGE_SERVER,
  serverFiles
} from "../../hosted/serverFiles.ts"
import { parseEdgeSecrets } from "../../network/edgeSecrets.ts"
import { parseNetworkPolicy } from "../../network/policy.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { sessionKeyDigestEnv } from "../../server/sessionKey.ts"
import { IMAGE_FILES, type ServerFiles } from "../../serverStart/serverProbe.ts"
import type { Driver, DriverDefinition, ProviderCall, SandboxSpec } from "../../services/Driver.ts"
import { classifyE2B } from "./classify.ts"
import { checkE2BEgress, checkE2BSecrets, e2bEgress } from "./egress.ts"
import {
  cappedMessage,
  endingMessage,
  isMaxLengthExceeded,
  type Life,
  newLife,
  pastCap,
  PLAN_LIFETIME,
  renewalMillis
} from "./lifetime.ts"
import type { E2BRuntimeOptions } from "./options.ts"
import { SDK_REQUEST_TIMEOUT_MS, withinRequestTimeout } from "./requestDeadline.ts"
import { e2bSnapshots, forgetMemory } from "./snapshot.ts"

const DEFAULT_TEMPLATE = "effect-sandbox-runtime"
/** How long the server may take to answer (`aliveTimeout`'s default). */
const ALIVE_TIMEOUT: Duration.Input = "60 seconds"

/**
 * How often the SDK itself waits out a 429 that carries `Retry-After` (it alone sees the header;
 * it gives up on a wait past its request time-out): the rest (a 429 without one, 5xx, a state
 * change in progress) is the hosted runtime's `providerRetry`.
 */
const SDK_RATE_LIMIT_RETRIES = 3

/**
 * One E2B sandbox: its id, the SDK's object for it once connected (a listed sandbox is not:
 * connecting a paused one would resume it, which the reaper must not do), and its life against
 * E2B's cap.
 */
export interface E2BBox {
  readonly id: string
  instance: Sandbox | undefined
  readonly life: Life
}

/** The SDK module, or a start error saying to install it. */
const loadSdk = loadOptionalPeer("E2BRuntime", "e2b", "e2b", () => import("e2b"))

/** A duration option in milliseconds, at least 3 s: the time-out is renewed every third of it. */
const atLeastThreeSeconds = (name: string, input: Duration.Input) => {
  const millis = Duration.toMillis(Duration.fromInputUnsafe(input))
  return millis >= 3_000 ? Effect.succeed(millis) : Effect.fail(
    new InvalidOptionsError({
      message: `E2BRuntime options: ${name} must be at least 3 seconds (the timeout is renewed every third of it).`
    })
  )
}

const connect = Effect.fn("E2BRuntime.connect")(function*(options: E2BRuntimeOptions, call: ProviderCall) {
  yield* unsupported(
    "E2BRuntime",
    options,
    ["cpus", "memoryMiB"],
    "an E2B sandbox is sized by its template"
  )
  const idleMs = yield* atLeastThreeSeconds("idleTimeout", options.idleTimeout ?? "10 minutes")
  const lifetimeMs = yield* atLeastThreeSeconds("lifetime", options.lifetime ?? PLAN_LIFETIME)
  const apiKey = yield* credential(
    "E2BRuntime",
    options.apiKey,
    "apiKey",
    "E2B_API_KEY",
    "an E2B team API key, e2b_..."
  )
  const policy = yield* parseNetworkPolicy("E2BRuntime", options.network)
  const egress = e2bEgress(policy, yield* parseEdgeSecrets("E2BRuntime", options.secrets, policy))
  const { Sandbox } = yield* loadSdk
  // Never asked longer than the life: E2B refuses a create or connect beyond its cap.
  const timeoutMs = Math.min(idleMs, lifetimeMs)
  const template = options.template ?? DEFAULT_TEMPLATE
  const hostUrl = options.hostUrl ?? ((host: string) => `https://${host}`)
  const sdk = {
    apiKey: Redacted.value(apiKey),
    retries: SDK_RATE_LIMIT_RETRIES,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
    ...(options.sandboxUrl === undefined ? {} : { sandboxUrl: options.sandboxUrl }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs })
  }
  /** A control-plane request within its time-out whatever Node's fetch does with the abort (requestDeadline.ts). */
  const bounded = <A>(request: () => Promise<A>) => () =>
    withinRequestTimeout(options.requestTimeoutMs ?? SDK_REQUEST_TIMEOUT_MS, request)
  const connected = (box: E2BBox) =>
    box.instance !== undefined ? Effect.succeed(box.instance) : call(
      `connect to sandbox ${box.id}`,
      bounded(() => Sandbox.connect(box.id, { ...sdk, timeoutMs }))
    ).pipe(Effect.tap((instance) => Effect.sync(() => box.instance = instance)))

  /** A new life at this process's clock: a create, or a resume (E2B starts the VM anew). */
  const lifeFromNow = Effect.map(Clock.currentTimeMillis, newLife)

  /**
   * The time-out renewed within the cap: a renewal that cannot reach `timeoutMs` says when the
   * sandbox ends (once), and at the cap (or E2B's 400 saying it is past) renewals stop.
   */
  const renew = Effect.fn("E2BRuntime.renew")(function*(box: E2BBox) {
    if (box.life.capped || box.life.gone) return
    const now = yield* Clock.currentTimeMillis
    const renewal = renewalMillis(box.life, now, lifetimeMs, timeoutMs)
    if (renewal === 0) {
      box.life.capped = true
      return
    }
    if (renewal < timeoutMs && !box.life.announced) {
      box.life.announced = true
      yield* Effect.logWarning(endingMessage(box.id, renewal, lifetimeMs))
    }
    yield* call(`renew the timeout of sandbox ${box.id}`, bounded(() => Sandbox.setTimeout(box.id, renewal, sdk))).pipe(
      Effect.catchIf(isMaxLengthExceeded, (error) =>
        Effect.sync(() => {
          box.life.capped = true
        }).pipe(Effect.andThen(Effect.logWarning(error.message)))),
      Effect.catchIf((error) => error.reason === "not-found", () =>
        Effect.sync(() => {
          box.life.gone = true
        }))
    )
  })

  /**
   * Paused, as E2B sees it afterwards: the SDK reads every 409 as "already paused", and E2B answers
   * 409 to a pause while the sandbox is in a transition too (being snapshotted: still running).
   * Then the pause is refused as a transition ("409: ..."), which `providerRetry` waits out.
   */
  const pauseChecked = async (box: E2BBox) => {
    if (await Sandbox.pause(box.id, { ...sdk, keepMemory: true })) return
    const info = await Sandbox.getInfo(box.id, sdk)
    if (info.state !== "paused") {
      throw new Error(`409: sandbox ${box.id} is still ${info.state}: a state change is in progress`)
    }
  }

  /**
   * A server command started in the background as the user, with the key's digest in its
   * environment, its output heard for the `listening` line (and `imageServerLine`'s). Its end is
   * awaited from the start (it also ends those waits), so it never rejects unheard.
   */
  const startServer = Effect.fn("E2BRuntime.startServer")(function*(sandbox: Sandbox, spec: SandboxSpec, line: string) {
    const heard = yield* listeningLine(IMAGE_SERVER_FOUND)
    const handle = yield* call(
      "start the action server",
      () =>
        sandbox.commands.run(line, {
          background: true,
          user: spec.user.name,
          envs: { ...spec.server.env, ...sessionKeyDigestEnv(Redacted.value(spec.sessionKey)) },
          onStdout: heard.output,
          // The server runs as long as the sandbox: no deadline on its stream.
          timeoutMs: 0
        })
    )
    const ended = handle.wait().then(
      (done) => ({ exitCode: done.exitCode, output: `${done.stdout}${done.stderr}` }),
      (error: { exitCode?: number; stdout?: string; stderr?: string; message?: string }) => ({
        exitCode: error.exitCode ?? -1,
        output: error.stderr !== undefined ? `${error.stdout ?? ""}${error.stderr}` : String(error.message)
      })
    )
    let exit: { readonly exitCode: number } | undefined
    void ended.then((result) => {
      exit = result
      heard.ended()
    })
    return { handle, heard, ended, exited: () => exit }
  })

  /**
   * The image's server started at once where the template has it (`imageServerLine`); else the
   * workspace made (as root) beside the probe for the server's files, then that server started.
   * Either way its `listening` line is heard in the command's output stream.
   */
  const launch = Effect.fn("E2BRuntime.launch")(function*(box: E2BBox, spec: SandboxSpec) {
    const sandbox = yield* connected(box)
    const user = spec.user.name
    const serverLine = (files: ServerFiles) =>
      spec.server.argv({ ...files, workingDir: WORKSPACE }).map(shellQuote).join(" ")
    let started = yield* startServer(sandbox, spec, imageServerLine(serverLine(IMAGE_FILES)))
    // The marker line, or the end of a template without the server (which started nothing); a
    // stream that tells neither is waited for no longer than the server may take to answer.
    yield* Effect.timeoutOption(started.heard.found, options.aliveTimeout ?? ALIVE_TIMEOUT)
    if (started.exited()?.exitCode === NO_IMAGE_SERVER) {
      const workspace = call(
        `create ${WORKSPACE} for ${user}`,
        () => sandbox.commands.run(`mkdir -p ${WORKSPACE} && chown ${shellQuote(user)} ${WORKSPACE}`, { user: "root" })
      )
      // The workspace is ours (made beside) whichever server runs, so an attach finds it where it always is.
      const located = serverFiles({
        provider: "E2B",
        noun: "template",
        name: template,
        upload: options.uploadPayload ?? true,
        workspace: WORKSPACE,
        run: (what, command) =>
          Effect.map(call(what, () => sandbox.commands.run(command, { user })), (ran) => ran.stdout),
        // One multipart request for all of them.
        put: (payload) =>
          call("upload the action-server payload", () =>
            sandbox.files.write(
              payload.map((file) => ({ path: file.destination, data: new Blob([readFileSync(file.source)]) })),
              { user }
            ))
      })
      const [, files] = yield* Effect.all([workspace, located], { concurrency: 2 })
      started = yield* startServer(sandbox, spec, `cd ${WORKSPACE} && exec ${serverLine(files)}`)
    }
    const { ended, handle, heard } = started
    return {
      workspace: WORKSPACE,
      serverExit: Effect.promise(() => ended),
      listening: heard.listening,
      // Once started, the server's output is let go: the SDK's handle would keep all of it in this
      // process's memory for the sandbox's life. The server runs on (envd does not stop a process
      // whose client went away).
      started: Effect.tryPromise(() => handle.disconnect()).pipe(Effect.ignore)
    }
  })

  return {
    user: { name: "user", id: 1000 },
    aliveTimeout: ALIVE_TIMEOUT,
    create: (spec) => {
      const from = spec.fromSnapshot ?? template
      return call(
        `create a sandbox from ${spec.fromSnapshot === undefined ? "template" : "snapshot"} ${from}`,
        bounded(() => Sandbox.create(from, { ...sdk, ...egress, timeoutMs, metadata: { ...spec.tags } }))
      ).pipe(
        // A copy of a snapshot runs the source's memory (its server, with the source's key): rebooted first.
        Effect.flatMap((instance) =>
          spec.fromSnapshot === undefined
            ? Effect.succeed(instance)
            : forgetMemory(Sandbox, sdk, call, instance.sandboxId, timeoutMs).pipe(
              Effect.tapError(() =>
                Effect.ignore(call("kill the copy", bounded(() => Sandbox.kill(instance.sandboxId, sdk))))
              )
            )
        ),
        Effect.flatMap((instance) =>
          Effect.map(lifeFromNow, (life) => ({
            sandbox: { id: instance.sandboxId, instance, life },
            id: instance.sandboxId
          }))
        )
      )
    },
    launch,
    destroy: (box) => call(`kill sandbox ${box.id}`, bounded(() => Sandbox.kill(box.id, sdk))).pipe(Effect.asVoid),
    find: Effect.fn("E2BRuntime.find")(function*(tags) {
      const paginator = Sandbox.list({ ...sdk, query: { metadata: { ...tags } } })
      const found = []
      while (paginator.hasNext) {
        for (const listed of yield* call("list sandboxes", () => paginator.nextItems())) {
          found.push({
            sandbox: { id: listed.sandboxId, instance: undefined, life: newLife(listed.startedAt.getTime()) },
            id: listed.sandboxId,
            tags: listed.metadata,
            state: listed.state === "paused" ? "paused" as const : "running" as const
          })
        }
      }
      return found
    }),
    state: (box) =>
      call("look up the sandbox", bounded(() => Sandbox.getInfo(box.id, sdk))).pipe(
        Effect.map((info) => info.state === "paused" ? { _tag: "paused" as const } : { _tag: "running" as const }),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () =>
            Effect.map(Clock.currentTimeMillis, (now) => ({
              _tag: "gone" as const,
              why: pastCap(box.life, now, lifetimeMs)
                ? cappedMessage(box.id, lifetimeMs)
                : `E2B no longer has sandbox ${box.id} (killed, or its timeout ran out)`
            }))
        )
      ),
    endpoint: (box, port) => Effect.map(connected(box), (sandbox) => ({ url: hostUrl(sandbox.getHost(port)) })),
    // E2B kills the sandbox when its time-out runs out; E2B stops the clock while paused.
    keepAlive: { every: Duration.millis(timeoutMs / 3), touch: renew },
    pause: {
      keepsMemory: true,
      pause: (box) => call(`pause sandbox ${box.id}`, () => pauseChecked(box)),
      // A resume starts the sandbox's life anew.
      resume: (box) =>
        call(`resume sandbox ${box.id}`, bounded(() => Sandbox.connect(box.id, { ...sdk, timeoutMs }))).pipe(
          Effect.flatMap((instance) =>
            Effect.map(lifeFromNow, (life) => {
              box.instance = instance
              Object.assign(box.life, life)
            })
          )
        )
    },
    snapshot: e2bSnapshots(Sandbox, sdk, call)
  } satisfies Driver<E2BBox>
})

export const e2bDriver: DriverDefinition<E2BRuntimeOptions, E2BBox> = {
  provider: "E2B",
  kind: "e2b",
  network: checkE2BEgress,
  edgeSecrets: checkE2BSecrets,
  classify: classifyE2B,
  connect
}
