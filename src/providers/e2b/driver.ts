/**
 * The E2B driver (services/Driver.ts): a sandbox is made from a template with a server-side
 * time-out the owner renews, the action server started through the SDK's commands with its key
 * written as a file it reads and removes (server/sessionKey.ts), E2B's port exposure for every
 * port, and pause with memory. E2B's metadata holds the owner tags.
 */
import type { Sandbox } from "e2b"
import { Duration, Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { SESSION_KEY_FILE_VARIABLE } from "../../executor/childEnv.ts"
import { loadOptionalPeer } from "../../hosted/optionalPeer.ts"
import { credential, unsupported } from "../../hosted/options.ts"
import { IMAGE_WORKSPACE as WORKSPACE, serverFiles } from "../../hosted/serverFiles.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { InvalidOptionsError } from "../../schema/errors.ts"
import type { Driver, DriverDefinition, ProviderCall, SandboxSpec } from "../../services/Driver.ts"
import { classifyE2B } from "./classify.ts"
import type { E2BRuntimeOptions } from "./options.ts"

const DEFAULT_TEMPLATE = "effect-sandbox-runtime"

/**
 * One E2B sandbox: its id, and the SDK's object for it once connected (a listed sandbox is not:
 * connecting a paused one would resume it, which the reaper must not do).
 */
export interface E2BBox {
  readonly id: string
  instance: Sandbox | undefined
}

/** The SDK module, or a start error saying to install it. */
const loadSdk = loadOptionalPeer("E2BRuntime", "e2b", "e2b", () => import("e2b"))

const connect = Effect.fn("E2BRuntime.connect")(function*(options: E2BRuntimeOptions, call: ProviderCall) {
  yield* unsupported(
    "E2BRuntime",
    options,
    ["cpus", "memoryMiB", "lifetime"],
    "an E2B sandbox is sized and capped by its template and plan"
  )
  const idle = Duration.fromInputUnsafe(options.idleTimeout ?? "10 minutes")
  if (Duration.toMillis(idle) < 3_000) {
    return yield* new InvalidOptionsError({
      message: "E2BRuntime options: idleTimeout must be at least 3 seconds (it is renewed every third of it)."
    })
  }
  const apiKey = yield* credential(
    "E2BRuntime",
    options.apiKey,
    "apiKey",
    "E2B_API_KEY",
    "an E2B team API key, e2b_..."
  )
  const { Sandbox } = yield* loadSdk
  const timeoutMs = Duration.toMillis(idle)
  const template = options.template ?? DEFAULT_TEMPLATE
  const hostUrl = options.hostUrl ?? ((host: string) => `https://${host}`)
  // The SDK's own 429 retry is off: the hosted runtime's schedule is the only one.
  const sdk = {
    apiKey: Redacted.value(apiKey),
    retries: 0,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
    ...(options.sandboxUrl === undefined ? {} : { sandboxUrl: options.sandboxUrl }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs })
  }
  const connected = (box: E2BBox) =>
    box.instance !== undefined ? Effect.succeed(box.instance) : call(
      `connect to sandbox ${box.id}`,
      () => Sandbox.connect(box.id, { ...sdk, timeoutMs })
    ).pipe(Effect.tap((instance) => Effect.sync(() => box.instance = instance)))

  /** The server started in the background, the key first written as a file the server reads and removes. */
  const launch = Effect.fn("E2BRuntime.launch")(function*(box: E2BBox, spec: SandboxSpec) {
    const sandbox = yield* connected(box)
    const user = spec.user.name
    yield* call(
      `create ${WORKSPACE} for ${user}`,
      () => sandbox.commands.run(`mkdir -p ${WORKSPACE} && chown ${shellQuote(user)} ${WORKSPACE}`, { user: "root" })
    )
    const keyFile = `/tmp/effect-sandbox-session-key-${randomBytes(8).toString("hex")}`
    yield* call(
      "write the session key file",
      () => sandbox.files.write(keyFile, Redacted.value(spec.sessionKey), { user })
    )
    // The workspace is ours (made above) whichever server runs, so an attach finds it where it always is.
    const files = yield* serverFiles({
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
    const handle = yield* call(
      "start the action server",
      () =>
        sandbox.commands.run(spec.server.argv({ ...files, workingDir: WORKSPACE }).map(shellQuote).join(" "), {
          background: true,
          user,
          cwd: WORKSPACE,
          envs: { ...spec.server.env, [SESSION_KEY_FILE_VARIABLE]: keyFile },
          // The server runs as long as the sandbox: no deadline on its stream.
          timeoutMs: 0
        })
    )
    return {
      workspace: WORKSPACE,
      serverExit: Effect.promise(() =>
        handle.wait().then(
          (done) => ({ exitCode: done.exitCode, output: `${done.stdout}${done.stderr}` }),
          (error: { exitCode?: number; stdout?: string; stderr?: string; message?: string }) => ({
            exitCode: error.exitCode ?? -1,
            output: error.stderr !== undefined ? `${error.stdout ?? ""}${error.stderr}` : String(error.message)
          })
        )
      ),
      // Once started, the server's output is let go: the SDK's handle would keep all of it in this
      // process's memory for the sandbox's life. The server runs on (envd does not stop a process
      // whose client went away).
      started: Effect.tryPromise(() => handle.disconnect()).pipe(Effect.ignore)
    }
  })

  return {
    user: { name: "user", id: 1000 },
    aliveTimeout: "60 seconds",
    create: (spec) =>
      call(
        `create a sandbox from template ${template}`,
        () => Sandbox.create(template, { ...sdk, timeoutMs, metadata: { ...spec.tags } })
      ).pipe(
        Effect.map((instance) => ({ sandbox: { id: instance.sandboxId, instance }, id: instance.sandboxId }))
      ),
    launch,
    destroy: (box) => call(`kill sandbox ${box.id}`, () => Sandbox.kill(box.id, sdk)).pipe(Effect.asVoid),
    find: Effect.fn("E2BRuntime.find")(function*(tags) {
      const paginator = Sandbox.list({ ...sdk, query: { metadata: { ...tags } } })
      const found = []
      while (paginator.hasNext) {
        for (const listed of yield* call("list sandboxes", () => paginator.nextItems())) {
          found.push({
            sandbox: { id: listed.sandboxId, instance: undefined },
            id: listed.sandboxId,
            tags: listed.metadata,
            state: listed.state === "paused" ? "paused" as const : "running" as const
          })
        }
      }
      return found
    }),
    state: (box) =>
      call("look up the sandbox", () => Sandbox.getInfo(box.id, sdk)).pipe(
        Effect.map((info) => info.state === "paused" ? { _tag: "paused" as const } : { _tag: "running" as const }),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () =>
            Effect.succeed({
              _tag: "gone" as const,
              why: `E2B no longer has sandbox ${box.id} (killed, or its timeout ran out)`
            })
        )
      ),
    endpoint: (box, port) => Effect.map(connected(box), (sandbox) => ({ url: hostUrl(sandbox.getHost(port)) })),
    // E2B kills the sandbox when its time-out runs out; E2B stops the clock while paused.
    keepAlive: {
      every: Duration.divideUnsafe(idle, 3),
      touch: (box) => call(`renew the timeout of sandbox ${box.id}`, () => Sandbox.setTimeout(box.id, timeoutMs, sdk))
    },
    pause: {
      keepsMemory: true,
      pause: (box) =>
        call(`pause sandbox ${box.id}`, () => Sandbox.pause(box.id, { ...sdk, keepMemory: true })).pipe(Effect.asVoid),
      resume: (box) =>
        call(`resume sandbox ${box.id}`, () => Sandbox.connect(box.id, { ...sdk, timeoutMs })).pipe(
          Effect.tap((instance) => Effect.sync(() => box.instance = instance)),
          Effect.asVoid
        )
    }
  } satisfies Driver<E2BBox>
})

export const e2bDriver: DriverDefinition<E2BRuntimeOptions, E2BBox> = {
  provider: "E2B",
  kind: "e2b",
  classify: classifyE2B,
  connect
}
