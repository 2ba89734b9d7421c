/**
 * The Modal driver (services/Driver.ts): a sandbox (gVisor) whose command is the action server
 * itself (launcher.ts), so no exec channel is needed and `launch` only follows it; it gets the
 * SHA-256 of its session key, never the key (all the server needs to check requests, and nothing a
 * sandboxed command could call it with). Modal ends it at its lifetime, or once idle: the owner
 * keeps it busy through the tunnel every third of the idle timeout. Tunnels give the endpoints,
 * Modal's tags hold the owner tags. Modal cannot freeze a sandbox: no pause. Snapshots are images
 * of a sandbox's filesystem, published under names carrying the owner tags (snapshot.ts); a sandbox
 * starts from one instead of the layer's image.
 *
 * Finding sandboxes does not rest on `list()`, which may not return the V2 sandboxes `create` makes
 * (the SDK's docs say both): a session's sandbox is named after the session and looked up by name,
 * and the reaper reads this host's record of what it made (ledger.ts); what `list()` returns is
 * taken too.
 */
import { Duration, Effect, Fiber, Redacted, Schedule } from "effect"
import type { Sandbox } from "modal"
import { createHash } from "node:crypto"
import { hearUntilListening, listeningLine } from "../../hosted/listeningLine.ts"
import { unsupported, wholeDuration } from "../../hosted/options.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import { withReason } from "../../hosted/providerCall.ts"
import { SERVER_PORT } from "../../hosted/serverLaunch.ts"
import { parseNetworkPolicy } from "../../network/policy.ts"
import { InvalidOptionsError, ProviderError } from "../../schema/errors.ts"
import { sessionKeyDigestEnv } from "../../server/sessionKey.ts"
import { IMAGE_FILES } from "../../serverStart/serverProbe.ts"
import type { Driver, DriverDefinition, Found, ProviderCall } from "../../services/Driver.ts"
import { classifyModal } from "./classify.ts"
import { modalClient } from "./client.ts"
import { checkModalEgress, modalEgress } from "./egress.ts"
import { endedBecause, exitedByItself, returnCode, sandboxResult } from "./ended.ts"
import { launcherCommand, WORKSPACE } from "./launcher.ts"
import { forget, remember, remembered } from "./ledger.ts"
import type { ModalRuntimeOptions } from "./options.ts"
import { modalSnapshots, snapshotImage } from "./snapshot.ts"

const RUNTIME = "ModalRuntime"
const DEFAULT_APP = "effect-sandbox"
const DEFAULT_IMAGE = "effect-sandbox-runtime"

/** A duration option in whole seconds (Modal takes no fractions), at least `min` seconds: its milliseconds. */
const wholeSeconds = (name: string, value: Duration.Input, min: number) =>
  wholeDuration(
    RUNTIME,
    name,
    value,
    Duration.toSeconds,
    [min, Infinity],
    `whole seconds, at least ${min} (Modal counts in seconds)`
  )
    .pipe(Effect.map((seconds) => seconds * 1000))

/**
 * How long the tunnels may take to appear when the create's answer lacks them (the SDK's own long
 * poll, within the start's 90 s): past it, a start error saying so, not a wait for ever.
 */
const TUNNELS_WAIT_MS = 50_000

/** How long a start failure waits for the sandbox's logs, which Modal may persist a moment after its end. */
const LATE_LOGS = Schedule.spaced("250 millis").pipe(Schedule.upTo({ times: 20 }))

/**
 * How long the command's output stream is heard for the server's `listening` line: a stream that
 * stalls (neither data nor an end nor an error) must not hold the `/alive` wait back for the whole
 * start's budget, so past this the wait polls as it did without the stream. Well above a boot on the
 * stand-in (~0.2 s); a boot on Modal longer than this costs the poll's step (<= 50 ms), no more.
 */
const HEARING_MS = 3000

/**
 * The server's `listening` line heard in the sandbox command's standard output as it is printed
 * (the SDK's `sandbox.stdout`, for a V2 sandbox a `SandboxStdioReadV2` stream from the task's
 * command router, which the SDK resumes at its offset when the connection drops and ends at the
 * command's EOF). The read is cancelled (the SDK aborts its call) once the line came, so it does
 * not run on for the sandbox's life; a stream that fails, ends or stalls first ends the wait for
 * the line, and `/alive` is polled as before. Lets go when its scope closes.
 */
const hearListening = Effect.fn("ModalRuntime.hearListening")(function*(sandbox: Sandbox) {
  const heard = yield* listeningLine()
  const hear = Effect.tryPromise(async (signal) => {
    const reader = sandbox.stdout.getReader()
    const cancel = () => void reader.cancel().catch(() => undefined)
    signal.addEventListener("abort", cancel, { once: true })
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) heard.output(read.value)
    } finally {
      signal.removeEventListener("abort", cancel)
    }
  })
  const hearing = yield* hearUntilListening(heard, hear, Duration.millis(HEARING_MS))
  return { listening: heard.listening, started: Fiber.interrupt(hearing) }
})

/** The name of a session's sandbox (unique among an app's running sandboxes): found by it, made once. */
export const sessionSandboxName = (sessionId: string) =>
  /^[\w.-]{1,60}$/.test(sessionId)
    ? `es-${sessionId}`
    : `es-${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}`

const connect = Effect.fn("ModalRuntime.connect")(function*(options: ModalRuntimeOptions, call: ProviderCall) {
  yield* unsupported(RUNTIME, options, ["user", "userId"], "a Modal sandbox's command runs as root")
  const egress = modalEgress(yield* parseNetworkPolicy(RUNTIME, options.network))
  if (options.image !== undefined && options.registryImage !== undefined) {
    return yield* new InvalidOptionsError({
      message: `${RUNTIME} options: give image (a published Modal image) or registryImage, not both.`
    })
  }
  const lifetimeMs = yield* wholeSeconds("lifetime", options.lifetime ?? "24 hours", 1)
  const idleMs = yield* wholeSeconds("idleTimeout", options.idleTimeout ?? "5 minutes", 3)
  const client = yield* modalClient(options)
  // Looked up once, so a bad token or a missing image fails here, before any sandbox.
  const appName = options.app ?? DEFAULT_APP
  const app = yield* call(`look up app ${appName}`, () => client.apps.fromName(appName, { createIfMissing: true }))
  const imageName = options.registryImage ?? options.image ?? DEFAULT_IMAGE
  const image = yield* call(
    `look up image ${imageName}`,
    () =>
      options.registryImage === undefined
        ? client.images.fromName(imageName)
        : client.images.fromRegistry(imageName).build(app)
  ).pipe(Effect.mapError((error) => error.reason === "not-found" ? withReason(error, "image-missing") : error))

  // Tunnels missing from the create's answer are long-polled for by the SDK, which then throws.
  const endpoint = (sandbox: Sandbox, port: number) =>
    call(`get the tunnels of sandbox ${sandbox.sandboxId}`, () => sandbox.tunnels(TUNNELS_WAIT_MS)).pipe(
      Effect.mapError((error) =>
        error.reason === "timeout"
          ? new ProviderError({
            provider: "Modal",
            operation: error.operation,
            reason: "timeout",
            message: `Modal sandbox ${sandbox.sandboxId} opened no tunnels: Modal's wait for them (at most ` +
              `${TUNNELS_WAIT_MS / 1000} s) timed out`
          })
          : error
      ),
      Effect.flatMap((tunnels) => {
        const tunnel = tunnels[port]
        return tunnel !== undefined ? Effect.succeed({ url: tunnel.url }) : Effect.fail(
          new ProviderError({
            provider: "Modal",
            operation: `reach port ${port} of sandbox ${sandbox.sandboxId}`,
            reason: "not-found",
            message: `Modal sandbox ${sandbox.sandboxId} has no tunnel to port ${port}`
          })
        )
      })
    )

  /**
   * The last lines the sandbox's command printed, from Modal's persisted logs (stdout and stderr),
   * asked again for a few seconds while there are none: they may land a moment after the end.
   */
  const lastOutput = (sandbox: Sandbox) =>
    call(`read the logs of sandbox ${sandbox.sandboxId}`, async () => {
      const lines: Array<string> = []
      for await (const entry of sandbox.logs.tail({ entries: 20 })) lines.push(entry.message)
      return lines.join("")
    }).pipe(
      Effect.repeat({ schedule: LATE_LOGS, until: (output) => output.trim() !== "" }),
      Effect.catch((error) => Effect.succeed(`(unreadable: ${error.message})`))
    )

  /** The sandbox's result once it ended (waiting at most `timeoutSecs`), undefined while it runs. */
  const resultOf = (sandbox: Sandbox, timeoutSecs: number) =>
    call(`follow sandbox ${sandbox.sandboxId}`, () => sandboxResult(client, sandbox.sandboxId, timeoutSecs))

  /** A sandbox of ours `find` came across, if it runs and carries all of `tags` (an ended one is forgotten). */
  const candidate = (sandboxId: string, tags: Readonly<Record<string, string>>) =>
    Effect.gen(function*() {
      const sandbox = yield* call(`look up sandbox ${sandboxId}`, () => client.sandboxes.fromId(sandboxId))
      const ended = yield* resultOf(sandbox, 0)
      if (ended !== undefined) {
        yield* Effect.promise(() => forget(app.appId, sandboxId))
        return undefined
      }
      const own = yield* call(`read the tags of sandbox ${sandboxId}`, () => sandbox.getTags())
      const found: Found<Sandbox> = { sandbox, id: sandboxId, tags: own, state: "running" }
      return Object.entries(tags).every(([k, v]) => own[k] === v) ? found : undefined
    }).pipe(
      Effect.catchIf(
        (error) => error.reason === "not-found",
        () => Effect.as(Effect.promise(() => forget(app.appId, sandboxId)), undefined)
      )
    )

  /** The session's sandbox by its name, if one runs (the lookup the SDK guarantees for V2 sandboxes). */
  const byName = (sessionId: string | undefined) =>
    sessionId === undefined ? Effect.succeed([] as Array<string>) : call(
      `look up the sandbox of session ${sessionId}`,
      () =>
        client.sandboxes.fromName(appName, sessionSandboxName(sessionId)).then(
          (sandbox) => [sandbox.sandboxId],
          (error: unknown) => (error as { name?: string }).name === "NotFoundError" ? [] : Promise.reject(error)
        )
    )

  return {
    // The sandbox's command runs as root (in gVisor); the server and its commands with it.
    user: { name: "root", id: 0 },
    aliveTimeout: "90 seconds",
    create: Effect.fn("ModalRuntime.create")(function*(spec) {
      const from = spec.fromSnapshot === undefined ? image : yield* snapshotImage(client, call, spec.fromSnapshot)
      const named = spec.fromSnapshot === undefined ? `image ${imageName}` : `snapshot ${spec.fromSnapshot}`
      return yield* call(`create a sandbox from ${named}`, () =>
        client.sandboxes.create(app, from, {
          command: launcherCommand(spec.server.argv({ ...IMAGE_FILES, workingDir: WORKSPACE })),
          env: {
            ...spec.server.env,
            ...sessionKeyDigestEnv(Redacted.value(spec.sessionKey))
          },
          encryptedPorts: [spec.server.port, ...spec.ports],
          timeoutMs: lifetimeMs,
          // Kept alive on release, nothing keeps it busy once its owner is gone: only its lifetime ends it.
          ...(spec.keepAlive ? {} : { idleTimeoutMs: idleMs }),
          ...(options.cpus === undefined ? {} : { cpu: options.cpus }),
          ...(options.memoryMiB === undefined ? {} : { memoryMiB: options.memoryMiB }),
          name: sessionSandboxName(spec.sessionId),
          tags: { ...spec.tags },
          ...egress
        })).pipe(
          Effect.tap((sandbox) => Effect.promise(() => remember(app.appId, sandbox.sandboxId).catch(() => undefined))),
          Effect.map((sandbox) => ({ sandbox, id: sandbox.sandboxId }))
        )
    }),
    // The sandbox's command is the server: its `listening` line heard as it prints it; followed, its
    // exit code and persisted logs its last words, an end it did not choose (an eviction, a
    // time-out) said as such after them.
    launch: (sandbox) =>
      Effect.map(hearListening(sandbox), (hearing) => ({
        ...hearing,
        workspace: WORKSPACE,
        serverExit: resultOf(sandbox, 10).pipe(
          Effect.repeat({ until: (result) => result !== undefined }),
          Effect.flatMap((result) =>
            Effect.map(lastOutput(sandbox), (output) => ({
              exitCode: returnCode(result!),
              output: exitedByItself(result!) ? output : `${output}\n(Modal: ${endedBecause(result!).why})`
            }))
          )
        )
      })),
    destroy: (sandbox) =>
      call(`terminate sandbox ${sandbox.sandboxId}`, () => sandbox.terminate()).pipe(
        Effect.catchIf((error) => error.reason === "not-found", () => Effect.void),
        Effect.andThen(Effect.promise(() => forget(app.appId, sandbox.sandboxId)))
      ),
    // Whatever Modal's list answers (ids of running sandboxes, filtered on tags), with the session's
    // sandbox by name and this host's record: each read for its own tags and state.
    find: Effect.fn("ModalRuntime.find")(function*(tags) {
      const listed = yield* call("list sandboxes by tag", async () => {
        const ids: Array<string> = []
        for await (const sandbox of client.sandboxes.list({ appId: app.appId, tags: { ...tags } })) {
          ids.push(sandbox.sandboxId)
        }
        return ids
      })
      const session = tags[TAGS.session]
      const named = yield* byName(session)
      // A session is found by its name; the record is for what has none to go by (the reaper's pass).
      const here = session === undefined ? yield* Effect.promise(() => remembered(app.appId)) : []
      const found = yield* Effect.forEach(new Set([...listed, ...named, ...here]), (id) => candidate(id, tags))
      return found.filter((one) => one !== undefined)
    }),
    state: (sandbox) =>
      resultOf(sandbox, 0).pipe(
        Effect.map((result) => {
          if (result === undefined) return { _tag: "running" as const }
          const { why, outOfMemory } = endedBecause(result)
          return { _tag: "gone" as const, why: `Modal sandbox ${sandbox.sandboxId} ended: ${why}`, outOfMemory }
        })
      ),
    endpoint,
    // Modal counts a request through the tunnel as activity: the sandbox idles only once its owner is gone.
    keepAlive: {
      every: Duration.millis(Math.floor(idleMs / 3)),
      // A touch that finds no server (not up yet) is no matter: the next one comes.
      touch: (sandbox) =>
        endpoint(sandbox, SERVER_PORT).pipe(
          Effect.flatMap(({ url }) =>
            Effect.promise(() =>
              fetch(`${url}/alive`).then((response) => response.arrayBuffer()).catch(() => undefined)
            )
          ),
          Effect.asVoid
        )
    },
    snapshot: modalSnapshots(client, call, lifetimeMs)
  } satisfies Driver<Sandbox>
})

export const modalDriver: DriverDefinition<ModalRuntimeOptions, Sandbox> = {
  provider: "Modal",
  kind: "modal",
  network: checkModalEgress,
  classify: classifyModal,
  connect
}
