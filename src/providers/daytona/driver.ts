/**
 * The Daytona driver (services/Driver.ts): a sandbox made from a snapshot with Daytona's auto-stop
 * (`idleTimeout`, refreshed as activity), auto-delete and TTL (`lifetime`), the owner tags as its
 * labels; the server a toolbox session's command, its key's digest in that command's environment
 * (hosted/serverLaunch.ts), the snapshot's own server started without a probe before it, its
 * `listening` line heard in the command's followed log; the preview link with its token for every port, a signed one for VS Code
 * (a browser cannot send the token); pause with memory where the sandbox's class allows it
 * (states.ts), and start after auto-stop. Each sandbox is named after its session (sessionName.ts),
 * so an attach finds it whatever the eventually consistent list says. Snapshots are Daytona's
 * snapshots of a sandbox (snapshot.ts): a sandbox starts from one instead of the layer's snapshot.
 */
import type { Sandbox } from "@daytonaio/sdk"
import { Config, Duration, Effect, Option, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { type ListeningLine, listeningLine, markedOrAsked } from "../../hosted/listeningLine.ts"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential, unsupported, wholeDuration } from "../../hosted/options.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import {
  IMAGE_SERVER_FOUND,
  IMAGE_WORKSPACE,
  NO_IMAGE_SERVER,
  runningWorkspace,
  serverFiles,
  shellLines
} from "../../hosted/serverFiles.ts"
import { imageServerShellLine, serverShellLine } from "../../hosted/serverLaunch.ts"
import { parseNetworkPolicy } from "../../network/policy.ts"
import type { ProviderError } from "../../schema/errors.ts"
import type { Driver, DriverDefinition, ProviderCall, SandboxSpec, SandboxState } from "../../services/Driver.ts"
import { classifyDaytona } from "./classify.ts"
import { checkDaytonaEgress, daytonaEgress } from "./egress.ts"
import { listSandboxes } from "./listing.ts"
import { type DaytonaRuntimeOptions, DEFAULT_SNAPSHOT } from "./options.ts"
import { sandboxName } from "./sessionName.ts"
import { daytonaSnapshots } from "./snapshot.ts"
import { pauseRefusal, stateOf } from "./states.ts"

/**
 * Thrown from the follow's callback once the line was heard: the SDK (utils/Stream.js
 * `stdDemuxStream`) catches what a callback throws while it handles a message, closes the socket
 * and rejects, and gives no other way to close it.
 */
const DONE_FOLLOWING = new Error("effect-sandbox: the server's output is no longer followed")

/**
 * The most the SDK hands a callback at the socket's close: the bytes it held back as a possible
 * stream marker's start (at most 2) and the decoder's unfinished UTF-8 sequence (at most 3).
 */
const FLUSHED_AT_CLOSE = 5

/** The server's output without `imageServerLine`'s marker line. */
const withoutMarker = (stdout: string) =>
  stdout.split("\n").filter((line) => !line.startsWith(IMAGE_SERVER_FOUND)).join("\n")

/** How long the first `/alive` wait may take, and each of Daytona's waits for a state (`aliveTimeout`). */
const ALIVE_TIMEOUT: Duration.Input = "90 seconds"

/** A lifetime in whole minutes, as Daytona counts them. */
const minutes = (name: string, input: Duration.Input, least: number) =>
  wholeDuration(
    "DaytonaRuntime",
    name,
    input,
    Duration.toMinutes,
    [least, Infinity],
    "whole minutes (as Daytona counts it)"
  )

/** Shell lines through the toolbox, as the sandbox user (its output is stdout and stderr merged). */
const inSandbox = (call: ProviderCall, sandbox: Sandbox) => {
  const exec = (command: string) =>
    sandbox.process.executeCommand(command).then((ran) => ({ ...ran, stdout: ran.result, output: ran.result }))
  return shellLines("Daytona", `sandbox ${sandbox.id}`, call, exec)
}

const optional = (name: string) => Effect.map(Config.option(Config.String(name)), Option.getOrUndefined)

const connect = Effect.fn("DaytonaRuntime.connect")(function*(options: DaytonaRuntimeOptions, call: ProviderCall) {
  yield* unsupported("DaytonaRuntime", options, ["cpus", "memoryMiB"], "a Daytona sandbox is sized by its snapshot")
  const idle = yield* minutes("idleTimeout", options.idleTimeout ?? "15 minutes", 1)
  const autoDelete = yield* minutes("autoDeleteAfter", options.autoDeleteAfter ?? 0, 0)
  const ttl = options.lifetime === undefined ? 0 : yield* minutes("lifetime", options.lifetime, 1)
  const egress = daytonaEgress(yield* parseNetworkPolicy("DaytonaRuntime", options.network))
  const seconds = yield* wholeDuration(
    "DaytonaRuntime",
    "vscodeLinkExpiry",
    options.vscodeLinkExpiry ?? "24 hours",
    (duration) => Math.floor(Duration.toSeconds(duration)),
    [1, 24 * 60 * 60],
    "between 1 second and 24 hours (what Daytona allows for a signed preview URL)"
  )
  const apiKey = yield* credential("DaytonaRuntime", options.apiKey, "apiKey", "DAYTONA_API_KEY", "a Daytona API key")
  const peer = "@daytonaio/sdk"
  const sdk = yield* loadOptionalPeer("DaytonaRuntime", peer, peer, () => import("@daytonaio/sdk"))
  // All three passed, so the SDK never falls back to reading a `.env` file of the working directory.
  const apiUrl = options.apiUrl ?? (yield* optional("DAYTONA_API_URL")) ?? "https://app.daytona.io/api"
  const target = options.target ?? (yield* optional("DAYTONA_TARGET"))
  const client = yield* Effect.acquireRelease(
    Effect.sync(() => new sdk.Daytona({ apiKey: Redacted.value(apiKey), apiUrl, ...(target ? { target } : {}) })),
    (made) => Effect.promise(() => made[Symbol.asyncDispose]())
  )
  const snapshot = options.snapshot ?? DEFAULT_SNAPSHOT
  // The SDK waits 60 s for a create, start or pause to reach its state; a first pull of the
  // snapshot onto a runner takes longer. It waits as long as the runtime's start may take instead.
  const deadline = Math.ceil(Duration.toSeconds(Duration.fromInputUnsafe(options.aliveTimeout ?? ALIVE_TIMEOUT)))

  /** The sandbox of this name, if Daytona has one (`get` reads its database, not the list's index). */
  const named = (name: string) =>
    call(`look up sandbox ${name}`, () => client.get(name)).pipe(
      Effect.catchIf((error) => error.reason === "not-found", () => Effect.succeed(undefined))
    )

  const destroy = (sandbox: Sandbox) =>
    // Waited for until it is gone: Daytona deletes in the background, and a release leaves nothing.
    call(`delete sandbox ${sandbox.id}`, () => sandbox.delete(deadline, true)).pipe(
      Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)
    )

  /**
   * A failed create may still have made the sandbox (an answer lost to a cut connection or a
   * time-out while Daytona pulls the snapshot): the one of this name carrying our key is deleted,
   * so nothing is left behind, and the create's failure stands.
   */
  const undoCreate = (name: string, key: string, failure: ProviderError) =>
    named(name).pipe(
      Effect.flatMap((left) =>
        left === undefined || left.labels[TAGS.sessionKey] !== key ? Effect.void : destroy(left)
      ),
      Effect.catch((error) => Effect.logWarning(error.message)),
      Effect.andThen(Effect.fail(failure))
    )

  /**
   * One toolbox session's command started in the background, its standard output followed over the
   * SDK's WebSocket (`getSessionCommandLogs` with callbacks) for the server's `listening` line and
   * `imageServerLine`'s. The follow is the SDK's promise, settled or not: it never rejects unheard,
   * and its end (or failure) ends both waits, after which the `/alive` poll takes over. The chunk
   * that brings the `listening` line closes the follow (DONE_FOLLOWING): the socket and the
   * daemon's reader do not stay open for the sandbox's life.
   */
  const startCommand = Effect.fn("DaytonaRuntime.startCommand")(
    function*(sandbox: Sandbox, session: string, command: string) {
      const heard = yield* listeningLine(IMAGE_SERVER_FOUND)
      const { cmdId } = yield* call(
        `start the action server in sandbox ${sandbox.id}`,
        () => sandbox.process.executeSessionCommand(session, { command, runAsync: true })
      )
      const output = (chunk: string) => {
        heard.output(chunk)
        // Only from a message: the SDK calls back from the socket's close too (the few bytes it held
        // back, never more than FLUSHED_AT_CLOSE), where a throw would be nobody's to catch.
        if (heard.heard() && chunk.length > FLUSHED_AT_CLOSE) throw DONE_FOLLOWING
      }
      void sandbox.process.getSessionCommandLogs(session, cmdId, output, () => undefined).then(
        heard.ended,
        heard.ended
      )
      return { cmdId, heard }
    }
  )

  /**
   * Whether the image's server started, once the marker line or the stream's end came (or neither
   * within the first 100 ms: a stream that never opens, or a daemon that never closes it after the
   * exit): the command's log and exit code as the daemon has them, asked every 100 ms until one of
   * them says. `true`: the image's server runs (or ran: its exit is the start's failure).
   */
  const imageServerStarted = (sandbox: Sandbox, session: string, cmdId: string, heard: ListeningLine) => {
    const asked = Effect.all([
      call("follow the action server", () => sandbox.process.getSessionCommand(session, cmdId)),
      call("read the action server's output", () => sandbox.process.getSessionCommandLogs(session, cmdId))
    ]).pipe(
      Effect.map(([ran, logs]) =>
        (logs.stdout ?? "").includes(IMAGE_SERVER_FOUND)
          ? Option.some(true)
          : typeof ran.exitCode === "number"
          ? Option.some(ran.exitCode !== NO_IMAGE_SERVER)
          : Option.none()
      ),
      Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: Option.isSome }),
      Effect.map(Option.getOrThrow)
    )
    return markedOrAsked(heard, asked, "100 millis")
  }

  /**
   * The server as a toolbox session's command, the key's digest set for it alone: the image's own
   * server at once where the snapshot has it (`imageServerLine`, in a subshell: the daemon sources
   * a session's commands in the session's one shell and writes the exit code once the command
   * returns, so an `exec` in that shell would leave none to write it). Where it exits
   * NO_IMAGE_SERVER, `serverFiles` probes (the payload uploaded, or what the snapshot lacks) and
   * that server starts in the same session, as that shell's child.
   */
  const launch = Effect.fn("DaytonaRuntime.launch")(function*(sandbox: Sandbox, spec: SandboxSpec) {
    // A session per launch: a started-again sandbox may still list an earlier one.
    const session = `effect-sandbox-server-${randomBytes(4).toString("hex")}`
    yield* call(`create a toolbox session in sandbox ${sandbox.id}`, () => sandbox.process.createSession(session))
    let started = yield* startCommand(sandbox, session, `(${imageServerShellLine(spec)})`)
    let workspace = IMAGE_WORKSPACE
    if (!(yield* imageServerStarted(sandbox, session, started.cmdId, started.heard))) {
      const files = yield* serverFiles({
        provider: "Daytona",
        noun: "snapshot",
        name: spec.fromSnapshot ?? snapshot,
        upload: options.uploadPayload ?? true,
        run: inSandbox(call, sandbox),
        put: (payload) =>
          call(`upload the action server into sandbox ${sandbox.id}`, () => sandbox.fs.uploadFiles([...payload]))
      })
      workspace = files.workspace
      started = yield* startCommand(sandbox, session, serverShellLine(spec, files))
    }
    const { cmdId, heard } = started
    // The daemon records the command's exit code and output: a server that dies at start says why.
    const serverExit = call("follow the action server", () => sandbox.process.getSessionCommand(session, cmdId)).pipe(
      Effect.repeat({ schedule: Schedule.spaced("500 millis"), until: (ran) => typeof ran.exitCode === "number" }),
      Effect.flatMap((ended) =>
        call("read the action server's output", () => sandbox.process.getSessionCommandLogs(session, cmdId)).pipe(
          // `output` is the daemon's raw log (each line marked with its stream): the two streams
          // instead, without the line that said the image's server starts (ours, not the server's).
          Effect.map((logs) => ({
            exitCode: ended.exitCode ?? -1,
            output: `${withoutMarker(logs.stdout ?? "")}${logs.stderr ?? ""}`
          }))
        )
      )
    )
    return { workspace, serverExit, listening: heard.listening }
  })

  return {
    user: { name: "openhands", id: 1000 },
    aliveTimeout: ALIVE_TIMEOUT,
    create: (spec) => {
      const name = sandboxName(spec.sessionId)
      const from = spec.fromSnapshot ?? snapshot
      return call(`create a sandbox from snapshot ${from}`, () =>
        client.create({
          name,
          snapshot: from,
          user: spec.user.name,
          envVars: { ...spec.server.env },
          labels: { ...spec.tags },
          autoStopInterval: idle,
          autoDeleteInterval: autoDelete,
          ...(ttl === 0 ? {} : { ttlMinutes: ttl }),
          ...egress
        }, { timeout: deadline })).pipe(
          Effect.catch((failure) => undoCreate(name, Redacted.value(spec.sessionKey), failure)),
          Effect.map((sandbox) => ({ sandbox, id: sandbox.id }))
        )
    },
    launch,
    destroy,
    find: (labels) => {
      const listed = call("list sandboxes", () => listSandboxes(client, labels))
      const session = labels[TAGS.session]
      // A session's sandbox by its name first; the list (which may lag) for one made before names.
      const candidates = session === undefined ? listed : named(sandboxName(session)).pipe(
        Effect.flatMap((one) =>
          one !== undefined && Object.entries(labels).every(([tag, value]) => one.labels[tag] === value)
            ? Effect.succeed([one])
            : listed
        )
      )
      return Effect.map(
        candidates,
        (found) =>
          found.map((sandbox) => ({ sandbox, id: sandbox.id, tags: sandbox.labels, state: stateOf(sandbox.state) }))
      )
    },
    state: (sandbox) =>
      call(`look up sandbox ${sandbox.id}`, () => sandbox.refreshData()).pipe(
        Effect.map((): SandboxState => {
          const state = stateOf(sandbox.state)
          return state === "gone"
            ? { _tag: state, why: `Daytona sandbox ${sandbox.id} ended (${sandbox.state})` }
            : state === "stopped"
            ? { _tag: state, why: `Daytona stopped sandbox ${sandbox.id} (auto-stop, or stopped from outside)` }
            : { _tag: state }
        }),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () => Effect.succeed({ _tag: "gone" as const, why: `Daytona no longer has sandbox ${sandbox.id}` })
        )
      ),
    // A preview link answers only with its token; VS Code's is signed (the token in it), for a browser.
    endpoint: (sandbox, port, purpose) =>
      (purpose === "vscode"
        ? call(`get a signed preview link of port ${port}`, () => sandbox.getSignedPreviewUrl(port, seconds))
        : call(`get the preview link of port ${port}`, () => sandbox.getPreviewLink(port))).pipe(
          Effect.map((link) => ({
            // Without the trailing slash the client's paths would double.
            url: link.url.replace(/\/+$/, ""),
            ...(purpose === "vscode" ? {} : { headers: { "x-daytona-preview-token": Redacted.make(link.token) } })
          }))
        ),
    workspace: (sandbox) => runningWorkspace(inSandbox(call, sandbox)),
    start: (sandbox) => call(`start sandbox ${sandbox.id}`, () => sandbox.start(deadline)),
    // Auto-stop counts from the last activity: the owner is activity while it holds the sandbox.
    keepAlive: {
      every: Duration.divideUnsafe(Duration.minutes(idle), 3),
      touch: (sandbox) => call(`refresh the activity of sandbox ${sandbox.id}`, () => sandbox.refreshActivity())
    },
    pause: {
      keepsMemory: true,
      refusal: pauseRefusal,
      pause: (sandbox) => call(`pause sandbox ${sandbox.id}`, () => sandbox.pause(deadline)),
      resume: (sandbox) => call(`resume sandbox ${sandbox.id}`, () => sandbox.start(deadline))
    },
    snapshot: daytonaSnapshots(client, call, deadline)
  } satisfies Driver<Sandbox>
})

export const daytonaDriver: DriverDefinition<DaytonaRuntimeOptions, Sandbox> = {
  provider: "Daytona",
  kind: "daytona",
  network: checkDaytonaEgress,
  classify: classifyDaytona,
  connect
}
