/**
 * The Modal driver (services/Driver.ts): a sandbox (gVisor) whose command is the action server
 * itself (launcher.ts), so no exec channel is needed and `launch` only follows it; it gets the
 * SHA-256 of its session key, never the key (all the server needs to check requests, and nothing a
 * sandboxed command could call it with). Modal ends it at its lifetime, or once idle: the owner
 * keeps it busy through the tunnel every third of the idle timeout. Tunnels give the endpoints,
 * Modal's tags hold the owner tags. Modal cannot freeze a sandbox: no pause.
 */
import { Duration, Effect, Redacted } from "effect"
import type { Sandbox } from "modal"
import { createHash } from "node:crypto"
import { SESSION_KEY_SHA256_VARIABLE } from "../../executor/childEnv.ts"
import { unsupported, wholeDuration } from "../../hosted/options.ts"
import { withReason } from "../../hosted/providerCall.ts"
import { SERVER_PORT } from "../../hosted/serverLaunch.ts"
import { InvalidOptionsError, ProviderError } from "../../schema/errors.ts"
import { IMAGE_FILES } from "../../serverStart/serverProbe.ts"
import type { Driver, DriverDefinition, ProviderCall } from "../../services/Driver.ts"
import { classifyModal } from "./classify.ts"
import { modalClient } from "./client.ts"
import { launcherCommand, WORKSPACE } from "./launcher.ts"
import type { ModalRuntimeOptions } from "./options.ts"

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

/** What an ended sandbox's return code says (the SDK's: 124 timeout, 137 terminated, else the server's). */
const endedBecause = (code: number) =>
  code === 124 ? "its timeout ran out" : code === 137 ? "it was terminated" : `its server exited with code ${code}`

const connect = Effect.fn("ModalRuntime.connect")(function*(options: ModalRuntimeOptions, call: ProviderCall) {
  yield* unsupported(RUNTIME, options, ["user", "userId"], "a Modal sandbox's command runs as root")
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

  const endpoint = (sandbox: Sandbox, port: number) =>
    call(`get the tunnels of sandbox ${sandbox.sandboxId}`, () => sandbox.tunnels()).pipe(
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

  /** The last lines the sandbox's command printed, from Modal's persisted logs (stdout and stderr). */
  const lastOutput = (sandbox: Sandbox) =>
    call(`read the logs of sandbox ${sandbox.sandboxId}`, async () => {
      const lines: Array<string> = []
      for await (const entry of sandbox.logs.tail({ entries: 20 })) lines.push(entry.message)
      return lines.join("")
    }).pipe(Effect.catch((error) => Effect.succeed(`(unreadable: ${error.message})`)))

  return {
    // The sandbox's command runs as root (in gVisor); the server and its commands with it.
    user: { name: "root", id: 0 },
    aliveTimeout: "90 seconds",
    create: (spec) =>
      call(`create a sandbox from image ${imageName}`, () =>
        client.sandboxes.create(app, image, {
          command: launcherCommand(spec.server.argv({ ...IMAGE_FILES, workingDir: WORKSPACE })),
          env: {
            ...spec.server.env,
            [SESSION_KEY_SHA256_VARIABLE]: createHash("sha256").update(Redacted.value(spec.sessionKey)).digest("hex")
          },
          encryptedPorts: [spec.server.port, ...spec.ports],
          timeoutMs: lifetimeMs,
          // Kept alive on release, nothing keeps it busy once its owner is gone: only its lifetime ends it.
          ...(spec.keepAlive ? {} : { idleTimeoutMs: idleMs }),
          ...(options.cpus === undefined ? {} : { cpu: options.cpus }),
          ...(options.memoryMiB === undefined ? {} : { memoryMiB: options.memoryMiB }),
          tags: { ...spec.tags }
        })).pipe(Effect.map((sandbox) => ({ sandbox, id: sandbox.sandboxId }))),
    // The sandbox's command is the server: follow it, its exit code and persisted logs its last words.
    launch: (sandbox) =>
      Effect.succeed({
        workspace: WORKSPACE,
        serverExit: call(`follow sandbox ${sandbox.sandboxId}`, () => sandbox.wait()).pipe(
          Effect.flatMap((exitCode) => Effect.map(lastOutput(sandbox), (output) => ({ exitCode, output })))
        )
      }),
    destroy: (sandbox) =>
      call(`terminate sandbox ${sandbox.sandboxId}`, () => sandbox.terminate()).pipe(
        Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)
      ),
    // Modal's list filters on tags but answers ids only (running sandboxes): each is read for its own.
    find: Effect.fn("ModalRuntime.find")(function*(tags) {
      const listed = yield* call("list sandboxes by tag", async () => {
        const found: Array<Sandbox> = []
        for await (const sandbox of client.sandboxes.list({ appId: app.appId, tags: { ...tags } })) found.push(sandbox)
        return found
      })
      return yield* Effect.forEach(
        listed,
        (sandbox) =>
          call(`read the tags of sandbox ${sandbox.sandboxId}`, () => sandbox.getTags()).pipe(
            Effect.map((own) => ({ sandbox, id: sandbox.sandboxId, tags: own, state: "running" as const }))
          )
      )
    }),
    state: (sandbox) =>
      call(`poll sandbox ${sandbox.sandboxId}`, () => sandbox.poll()).pipe(
        Effect.map((code) =>
          code === null
            ? { _tag: "running" as const }
            : { _tag: "gone" as const, why: `Modal sandbox ${sandbox.sandboxId} ended: ${endedBecause(code)}` }
        )
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
    }
  } satisfies Driver<Sandbox>
})

export const modalDriver: DriverDefinition<ModalRuntimeOptions, Sandbox> = {
  provider: "Modal",
  kind: "modal",
  classify: classifyModal,
  connect
}
