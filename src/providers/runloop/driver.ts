/**
 * The Runloop driver (services/Driver.ts): a devbox (a microVM) made from a blueprint with our
 * metadata, the server's environment, its size and idle policy (launchParameters.ts); the server
 * an execution of the command API once the devbox runs, its key's digest set for it alone
 * (hosted/serverLaunch.ts), whose exit code and output Runloop keeps, its `listening` line heard in
 * the execution's output stream; every port reached through the authenticated tunnel, whose token
 * is a second secret. Pause is Runloop's
 * suspend, which keeps the disk but "will not snapshot memory state such as running processes" (the
 * SDK's words): the server is started again. Snapshots are Runloop's disk snapshots (snapshot.ts).
 */
import type { Runloop } from "@runloop/api-client"
import { Config, Duration, Effect, Fiber, Option, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { createReadStream } from "node:fs"
import { hearUntilListening, listeningLine, markedOrAsked } from "../../hosted/listeningLine.ts"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential, unsupported } from "../../hosted/options.ts"
import {
  IMAGE_SERVER_FOUND,
  IMAGE_WORKSPACE,
  NO_IMAGE_SERVER,
  runningWorkspace,
  serverFiles,
  shellLines
} from "../../hosted/serverFiles.ts"
import { imageServerShellLine, serverShellLine } from "../../hosted/serverLaunch.ts"
import { startedOnce } from "../../hosted/startOnce.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import { LISTENING_PREFIX } from "../../server/announce.ts"
import type { Driver, DriverDefinition, Found, ProviderCall, SandboxSpec, SandboxState } from "../../services/Driver.ts"
import { classifyRunloop } from "./classify.ts"
import { withDeadline } from "./deadline.ts"
import { launchParameters } from "./launchParameters.ts"
import { DEFAULT_BLUEPRINT, type RunloopRuntimeOptions } from "./options.ts"
import { runloopSnapshots } from "./snapshot.ts"

/** One devbox: its id, and its tunnel once known (made with it, listed with it, or enabled later). */
export interface Devbox {
  readonly id: string
  tunnel: Runloop.DevboxView["tunnel"]
}

/** Authenticated (a token besides the session key); its traffic counts as activity for the idle policy. */
const TUNNEL = { auth_mode: "authenticated", http_keep_alive: true } as const
/** How long a devbox may take to boot, resume or suspend (Runloop's long polls). */
const LONG_POLL = { longPoll: { timeoutMs: 5 * 60_000 } }
/** How long one API request may go unanswered (the SDK's own default). */
const DEFAULT_REQUEST_MS = 30_000
/** How long one of our commands (looking for the server, making its directories) may take. */
const COMMAND_POLL = { longPoll: { timeoutMs: 60_000 } }
/** How long the server may take to answer (`aliveTimeout`'s default). */
const ALIVE_TIMEOUT: Duration.Input = "90 seconds"

/** The SDK's tunnel URL: the API host without `api.`, under `tunnel.`. */
const sdkTunnelUrl = (baseUrl: string) => (port: number, key: string) =>
  `https://${port}-${key}.tunnel.${new URL(baseUrl).hostname.replace(/^api\./, "")}`

/**
 * The statuses `find` lists: running and suspended, and every status on the way to one of them
 * (Runloop's list filters by one status at a time). A devbox caught between two states is still
 * the session's: missing it, attach would make a second one.
 */
const LISTED = [
  "running",
  "suspended",
  "scheduled",
  "queued",
  "provisioning",
  "initializing",
  "resuming",
  "suspending"
] as const

/**
 * A listed devbox once settled. A resuming one comes back without its server (a resume keeps only
 * the disk), so it counts as stopped: the hosted runtime then `start`s it (waits for it to run) and
 * launches the server.
 */
const found = (devbox: Runloop.DevboxView, resumed: boolean): Found<Devbox> => ({
  sandbox: { id: devbox.id, tunnel: devbox.tunnel },
  id: devbox.id,
  tags: devbox.metadata,
  state: devbox.status === "suspended" ? "paused" : resumed ? "stopped" : "running"
})

/** Where Runloop says a devbox is; a shut-down or failed one with Runloop's reason. */
const stateOf = (devbox: Runloop.DevboxView): SandboxState =>
  devbox.status === "shutdown" || devbox.status === "failure"
    ? {
      _tag: "gone",
      why: `Runloop devbox ${devbox.id} is ${devbox.status} (${
        devbox.failure_reason ?? devbox.shutdown_reason ?? "no reason given"
      })`,
      outOfMemory: devbox.failure_reason === "out_of_memory"
    }
    : { _tag: devbox.status === "suspended" ? "paused" : "running" }

/** How an execution ended, and what it printed (-1: Runloop did not say). */
const ended = (done: Runloop.DevboxAsyncExecutionDetailView) => ({
  exitCode: done.exit_status ?? -1,
  stdout: done.stdout ?? "",
  output: `${done.stdout ?? ""}${done.stderr ?? ""}`
})

const connect = Effect.fn("RunloopRuntime.connect")(function*(
  options: RunloopRuntimeOptions,
  providerCall: ProviderCall
) {
  yield* unsupported("RunloopRuntime", options, ["lifetime"], "Runloop ends a devbox by its idle policy (idleTimeout)")
  const idle = Duration.fromInputUnsafe(options.idleTimeout ?? "10 minutes")
  const parameters = yield* launchParameters(options, idle)
  const apiKey = yield* credential(
    "RunloopRuntime",
    options.apiKey,
    "apiKey",
    "RUNLOOP_API_KEY",
    "a Runloop API key, ak_..."
  )
  const baseUrl = (options.baseUrl ??
    Option.getOrElse(yield* Config.option(Config.String("RUNLOOP_BASE_URL")), () => "https://api.runloop.ai"))
    .replace(/\/+$/, "")
  const peer = "@runloop/api-client"
  const sdk = yield* loadOptionalPeer("RunloopRuntime", peer, peer, () => import("@runloop/api-client"))
  const requestMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_MS
  if (!(Number.isInteger(requestMs) && requestMs > 0)) {
    return yield* new InvalidOptionsError({
      message: "RunloopRuntime options: requestTimeoutMs must be a whole number of milliseconds, more than 0."
    })
  }
  // The SDK's own retries are off: the hosted runtime's schedule is the only one (classify.ts
  // takes for worth retrying all the SDK would have retried).
  const { devboxes } = new sdk.Runloop({
    bearerToken: Redacted.value(apiKey),
    baseURL: baseUrl,
    maxRetries: 0,
    timeout: requestMs
  })
  // Every call bounded (deadline.ts); a long poll by its own length and one request more.
  const call = withDeadline(providerCall, requestMs)
  const longCall = withDeadline(providerCall, LONG_POLL.longPoll.timeoutMs + requestMs)
  const commandCall = withDeadline(providerCall, COMMAND_POLL.longPoll.timeoutMs + requestMs)
  const blueprint = options.blueprint ?? DEFAULT_BLUEPRINT
  const tunnelUrl = options.tunnelUrl ?? sdkTunnelUrl(baseUrl)
  /** A listed devbox once it is running or suspended; undefined when it failed or shut down meanwhile. */
  const settle = (devbox: Runloop.DevboxView) =>
    devbox.status === "running" || devbox.status === "suspended"
      ? Effect.succeed(found(devbox, false))
      : longCall(
        `wait for devbox ${devbox.id} to leave ${devbox.status}`,
        () =>
          devbox.status === "suspending"
            ? devboxes.awaitSuspended(devbox.id, LONG_POLL)
            : devboxes.awaitRunning(devbox.id, LONG_POLL)
      ).pipe(
        Effect.map((settled) => found(settled, devbox.status === "resuming")),
        Effect.catch((error) =>
          error.reason === "unknown" || error.reason === "not-found" ? Effect.succeed(undefined) : Effect.fail(error)
        )
      )
  const awaitRunning = (box: Devbox) =>
    longCall(`wait for devbox ${box.id} to run`, () => devboxes.awaitRunning(box.id, LONG_POLL)).pipe(
      Effect.tap((devbox) => Effect.sync(() => box.tunnel = devbox.tunnel ?? box.tunnel))
    )
  const tunnelOf = (box: Devbox) =>
    box.tunnel !== undefined && box.tunnel !== null ? Effect.succeed(box.tunnel) : call(
      `enable the tunnel of devbox ${box.id}`,
      () => devboxes.enableTunnel(box.id, TUNNEL)
    ).pipe(Effect.tap((tunnel) => Effect.sync(() => box.tunnel = tunnel)))
  const inDevbox = (box: Devbox) => {
    const exec = (command: string) => devboxes.executeAndAwaitCompletion(box.id, { command }, COMMAND_POLL).then(ended)
    return shellLines("Runloop", `devbox ${box.id}`, commandCall, exec)
  }
  // `upload_file` takes a path from the user's home.
  const upload = (box: Devbox, file: { readonly source: string; readonly fromHome: string }) =>
    call(
      `upload ${file.fromHome} into devbox ${box.id}`,
      () => devboxes.uploadFile(box.id, { path: file.fromHome, file: createReadStream(file.source) })
    )

  /**
   * A server line started in a named shell of its own: a resumed devbox may still know an earlier
   * one. Not `exec`ed in that shell: should Runloop run a named shell's commands inside that one
   * shell (stateful, sequential, as its SDK describes them), `exec` (or `exit`) would end the shell
   * that reports the exit code, and a server dying at start would be seen only as the `/alive`
   * time-out; a child of the shell works either way (in a fresh `sh -c` too), and its stdin is not
   * the shell's, which reads the commands. Its standard output is heard from the execution's output
   * stream (SSE; the SDK reconnects from the last offset on Runloop's idle time-out) for the
   * `listening` line and `imageServerLine`'s, until the `listening` line or the stream's end. A copy
   * sent again after a cut connection starts nothing (hosted/startOnce.ts).
   */
  const startServer = Effect.fn("RunloopRuntime.startServer")(function*(box: Devbox, command: string) {
    // One claim for every copy of this start the retries send (hosted/startOnce.ts).
    const once = startedOnce(command)
    const started = yield* call(
      `start the action server in devbox ${box.id}`,
      () =>
        devboxes.executeAsync(box.id, {
          command: `${once} < /dev/null`,
          shell_name: `effect-sandbox-server-${randomBytes(4).toString("hex")}`
        })
    )
    const executionId = started.execution_id
    const heard = yield* listeningLine(IMAGE_SERVER_FOUND)
    const hear = Effect.tryPromise(async (signal) => {
      const chunks = await devboxes.executions.streamStdoutUpdates(box.id, executionId, {}, { signal })
      for await (const chunk of chunks) heard.output(chunk.output)
    })
    // Interrupted at the `listening` line, the stream's request is aborted.
    const hearing = yield* hearUntilListening(heard, hear)
    const retrieve = () => devboxes.executions.retrieve(box.id, executionId)
    // The start's failure (its end, every 500 ms); its output, where the stream stalled, ends the
    // wait for the `listening` line at the next step instead of after the whole `/alive` budget.
    const serverExit = call("follow the action server", retrieve).pipe(
      Effect.tap((now) => Effect.sync(() => (now.stdout ?? "").includes(LISTENING_PREFIX) && heard.ended())),
      Effect.repeat({ schedule: Schedule.spaced("500 millis"), until: (done) => done.status === "completed" }),
      Effect.map(ended)
    )
    return { heard, hearing, retrieve, serverExit }
  })

  /**
   * Whether the image's server runs: its marker came on the stream; else the execution says
   * it, its output holding the marker, or its end exit 78 (the blueprint lacks the server, and
   * nothing was started). The execution is asked once the stream ended without the marker, and
   * every 250 ms from the first 250 whatever the stream does: a stream can stall (the SDK's HTTP/2
   * transport waits for ever on a connection closed under it without an error).
   */
  const imageServerStarted = Effect.fn("RunloopRuntime.imageServerStarted")(function*(
    started: Effect.Success<ReturnType<typeof startServer>>
  ) {
    const asked = call("look at the action server's start", started.retrieve).pipe(
      Effect.repeat({
        schedule: Schedule.spaced("250 millis"),
        until: (now) => now.status === "completed" || (now.stdout ?? "").includes(IMAGE_SERVER_FOUND)
      }),
      Effect.map((now) => !(now.status === "completed" && now.exit_status === NO_IMAGE_SERVER))
    )
    return yield* markedOrAsked(started.heard, asked, "250 millis").pipe(
      Effect.timeoutOption(options.aliveTimeout ?? ALIVE_TIMEOUT),
      // Told nothing within the server's time: the `/alive` wait says what is wrong.
      Effect.map(Option.getOrElse(() => true))
    )
  })

  /**
   * The blueprint's own server started at once (`imageServerLine`, in a `sh -c` of its own: it
   * `exec`s the server, or exits 78 having started nothing); only then is the blueprint probed
   * (`serverFiles`: the payload uploaded, or what it lacks), and that server started.
   */
  const launch = Effect.fn("RunloopRuntime.launch")(function*(box: Devbox, spec: SandboxSpec) {
    yield* awaitRunning(box)
    let started = yield* startServer(box, `sh -c ${shellQuote(imageServerShellLine(spec))}`)
    let workspace = IMAGE_WORKSPACE
    if (!(yield* imageServerStarted(started))) {
      yield* Fiber.interrupt(started.hearing)
      const files = yield* serverFiles({
        provider: "Runloop",
        noun: "blueprint",
        name: blueprint,
        upload: options.uploadPayload ?? true,
        run: inDevbox(box),
        put: (payload) => Effect.forEach(payload, (file) => upload(box, file), { concurrency: 4 })
      })
      workspace = files.workspace
      started = yield* startServer(box, `cd ${shellQuote(files.workspace)} && ${serverShellLine(spec, files)}`)
    }
    return {
      workspace,
      serverExit: started.serverExit,
      listening: started.heard.listening,
      started: Fiber.interrupt(started.hearing)
    }
  })

  return {
    aliveTimeout: ALIVE_TIMEOUT,
    user: { name: "user", id: 1000 },
    create: (spec) => {
      // One idempotency key for every retry of this create: a create whose answer was lost (a cut
      // connection, a 5xx after the work) and is sent again makes no second devbox. The SDK keeps
      // its key across its own retries only, which are off.
      const idempotencyKey = `effect-sandbox-create-${randomBytes(12).toString("hex")}`
      return call(`create a devbox from blueprint ${blueprint}`, () =>
        devboxes.create({
          // Runloop takes one of the two: a devbox from a snapshot has its blueprint's image already.
          ...(spec.fromSnapshot === undefined ? { blueprint_name: blueprint } : { snapshot_id: spec.fromSnapshot }),
          name: `effect-sandbox-${spec.sessionId}`,
          metadata: { ...spec.tags },
          environment_variables: { ...spec.server.env },
          tunnel: TUNNEL,
          launch_parameters: { ...parameters, user_parameters: { username: spec.user.name, uid: spec.user.id } }
        }, { idempotencyKey })).pipe(
          Effect.map((devbox) => ({ sandbox: { id: devbox.id, tunnel: devbox.tunnel }, id: devbox.id }))
        )
    },
    launch,
    destroy: (box) =>
      call(`shut down devbox ${box.id}`, () => devboxes.shutdown(box.id)).pipe(
        Effect.asVoid,
        Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)
      ),
    snapshot: runloopSnapshots(devboxes, call, longCall),
    find: (tags) =>
      Effect.forEach(LISTED, (status) =>
        call(`list the ${status} devboxes`, async () => {
          const listed: Array<Runloop.DevboxView> = []
          for await (const devbox of devboxes.list({ status, limit: 100 })) {
            if (Object.entries(tags).every(([k, v]) => devbox.metadata[k] === v)) listed.push(devbox)
          }
          return listed
        })).pipe(
          Effect.flatMap((lists) => Effect.forEach(lists.flat(), settle)),
          Effect.map((settled) => settled.filter((one) => one !== undefined))
        ),
    // A devbox `find` saw resuming (reported stopped): running once the resume ends; the server follows.
    start: (box) => Effect.asVoid(awaitRunning(box)),
    state: (box) =>
      call(`look up devbox ${box.id}`, () => devboxes.retrieve(box.id)).pipe(
        Effect.map(stateOf),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () => Effect.succeed({ _tag: "gone" as const, why: `Runloop no longer has devbox ${box.id}` })
        )
      ),
    endpoint: (box, port) =>
      Effect.map(tunnelOf(box), (tunnel) => ({
        url: tunnelUrl(port, tunnel.tunnel_key),
        ...(tunnel.auth_token == null
          ? {}
          : { headers: { "x-runloop-tunnel-authorization": Redacted.make(`Bearer ${tunnel.auth_token}`) } })
      })),
    workspace: (box) => runningWorkspace(inDevbox(box)),
    // The idle policy shuts the devbox down unless the owner shows activity (none while suspended).
    keepAlive: {
      every: Duration.divideUnsafe(idle, 3),
      touch: (box) => Effect.asVoid(call(`keep devbox ${box.id} alive`, () => devboxes.keepAlive(box.id)))
    },
    pause: {
      keepsMemory: false,
      relaunch: true,
      pause: (box) =>
        Effect.andThen(
          call(`suspend devbox ${box.id}`, () => devboxes.suspend(box.id)),
          longCall(`wait for devbox ${box.id} to suspend`, () => devboxes.awaitSuspended(box.id, LONG_POLL))
        ),
      resume: (box) =>
        Effect.andThen(
          call(`resume devbox ${box.id}`, () => devboxes.resume(box.id)),
          Effect.asVoid(awaitRunning(box))
        )
    }
  } satisfies Driver<Devbox>
})

export const runloopDriver: DriverDefinition<RunloopRuntimeOptions, Devbox> = {
  provider: "Runloop",
  sandboxNoun: "devbox",
  kind: "runloop",
  classify: classifyRunloop,
  connect
}
