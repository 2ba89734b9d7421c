/**
 * The Remote driver (services/Driver.ts): a sandbox is a runtime a runtime API (OpenHands' remote
 * runtime API, spec §14) starts with our server as its command (`/start`, the image built through
 * the API first when it lacks one), followed until its pod is ready, paused and resumed by the API,
 * and stopped on release (paused, when kept alive). The API's proxy reaches the server, with the key
 * the API gives; its failed answers mean "paused" or "restarting" (actionServerErrors.ts).
 *
 * The API keys a runtime by its session id, and that is all it stores of ours: `find` looks a
 * session up, but cannot list the runtimes of an owner host, so the hosted reaper finds nothing
 * here. None is needed: the API pauses and stops idle runtimes itself.
 */
import { Duration, Effect, Redacted } from "effect"
import { IMAGE_NODE, IMAGE_SERVER, IMAGE_WORKSPACE } from "../../engines/docker/containerSpec.ts"
import { credential } from "../../hosted/options.ts"
import { TAGS } from "../../hosted/ownerTags.ts"
import { providerError } from "../../hosted/providerCall.ts"
import { imageRequirements } from "../../runtimeImage/imageContext.ts"
import { DEFAULT_SANDBOX_UID, DEFAULT_SANDBOX_USERNAME } from "../../runtimeImage/sandboxUser.ts"
import type { Driver, DriverDefinition, Found, ProviderCall, SandboxSpec } from "../../services/Driver.ts"
import { remoteServerErrors } from "./actionServerErrors.ts"
import { makeRuntimeApi, type StartRequest } from "./api.ts"
import { classifyRemote } from "./classify.ts"
import { remoteRuntimeImage } from "./imageBuild.ts"
import { checkRemoteOptions, type RemoteRuntimeOptions } from "./options.ts"
import { waitForPod } from "./podReadiness.ts"
import {
  ACTION_SERVER_PORT,
  BUILD_TIMEOUT,
  buildRetrySchedule,
  buildStatusSchedule,
  DEFAULT_ALIVE_TIMEOUT,
  DEFAULT_API_TIMEOUT,
  DEFAULT_API_URL,
  podStatusSchedule
} from "./policies.ts"

/** A runtime of the API: its id, where its server answers, its app hosts, its key when the API set one. */
export interface RemoteBox {
  readonly runtime_id: string
  readonly url: string
  readonly work_hosts?: Readonly<Record<string, number>> | undefined
  readonly session_api_key?: string | null | undefined
}

/**
 * `POST /start`'s body: our server on port 60000 and its environment, without `VSCODE_PORT` (the
 * API chooses that port, as OpenHands leaves it to it), with the key our server reads when the API
 * gives none of its own (server/sessionKey.ts), and the API's own fields.
 */
export const startRequest = (
  image: string,
  spec: Pick<SandboxSpec, "sessionId" | "sessionKey" | "server">,
  options: Pick<RemoteRuntimeOptions, "resourceFactor" | "runtimeClass">
): StartRequest => {
  const { VSCODE_PORT: _, ...environment } = spec.server.env
  return {
    image,
    command: spec.server.argv({ node: IMAGE_NODE, entry: IMAGE_SERVER, workingDir: IMAGE_WORKSPACE }),
    working_dir: IMAGE_WORKSPACE,
    environment: { ...environment, SESSION_API_KEY: Redacted.value(spec.sessionKey) },
    session_id: spec.sessionId,
    resource_factor: options.resourceFactor ?? 1,
    ...(options.runtimeClass === "sysbox" ? { runtime_class: "sysbox-runc" } : {})
  }
}

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

const baseUrlOf = (box: RemoteBox) => box.url.replace(/\/+$/, "")

const connect = Effect.fn("RemoteRuntime.connect")(function*(options: RemoteRuntimeOptions, call: ProviderCall) {
  yield* checkRemoteOptions(options)
  const apiKey = yield* credential(
    "RemoteRuntime",
    options.apiKey,
    "apiKey",
    "SANDBOX_API_KEY",
    "the runtime API's key, sent as X-API-Key"
  )
  const api = makeRuntimeApi({
    apiUrl: options.apiUrl ?? DEFAULT_API_URL,
    apiKey,
    timeout: Duration.fromInputUnsafe(options.apiTimeout ?? DEFAULT_API_TIMEOUT),
    call
  })
  const schedules = options.schedules ?? {}
  const aliveTimeout = Duration.fromInputUnsafe(options.aliveTimeout ?? DEFAULT_ALIVE_TIMEOUT)
  const waitReady = (box: RemoteBox) =>
    waitForPod(api, box.runtime_id, aliveTimeout, schedules.podStatus ?? podStatusSchedule)
  /** Resumed once the pod is ready again; a pod that will not be is the provider's failure to resume. */
  const resume = (box: RemoteBox) =>
    api.resume(box.runtime_id).pipe(
      Effect.andThen(waitReady(box)),
      Effect.catchTag("RuntimeStartError", (error) =>
        Effect.fail(
          providerError("Remote", `resume runtime ${box.runtime_id}`, { reason: "unavailable", text: error.message })
        ))
    )

  /** The image to start: the options', the sandbox's, or one the API builds (BUILDING_RUNTIME meanwhile). */
  const imageFor = (spec: SandboxSpec) => {
    const given = options.image ?? spec.sandbox.runtimeContainerImage ?? undefined
    return given !== undefined ? Effect.succeed(given) : remoteRuntimeImage(api, {
      baseImage: options.baseImage ?? spec.sandbox.baseContainerImage,
      userId: spec.user.id,
      username: spec.user.name,
      requires: imageRequirements(options, spec.sandbox),
      busySchedule: schedules.buildRetry ?? buildRetrySchedule,
      statusSchedule: schedules.buildStatus ?? buildStatusSchedule,
      timeout: BUILD_TIMEOUT
    }, spec.onStatus)
  }

  return {
    user: { name: DEFAULT_SANDBOX_USERNAME, id: DEFAULT_SANDBOX_UID },
    serverPort: ACTION_SERVER_PORT,
    aliveTimeout,
    create: Effect.fn("RemoteRuntime.create")(function*(spec) {
      const image = yield* imageFor(spec)
      const box: RemoteBox = yield* api.start(startRequest(image, spec, options))
      return {
        sandbox: box,
        id: box.runtime_id,
        ...(typeof box.session_api_key === "string" ? { sessionKey: Redacted.make(box.session_api_key) } : {})
      }
    }),
    // The runtime's command is the server: only follow its pod until it is ready.
    launch: (box) => Effect.as(waitReady(box), { workspace: IMAGE_WORKSPACE }),
    destroy: (box) =>
      api.stop(box.runtime_id).pipe(Effect.catchIf((error) => error.reason === "not-found", () => Effect.void)),
    find: Effect.fn("RemoteRuntime.find")(function*(tags) {
      const sessionId = tags[TAGS.session]
      // The API keys runtimes by session and keeps no tags of ours: an owner's runtimes cannot be
      // listed (the reaper's question), and need not be: the API ends idle runtimes itself.
      if (sessionId === undefined) return []
      const session = yield* api.session(sessionId)
      if (session?.runtime_id === undefined || session.url === undefined) return []
      // A stopped runtime (or any other status) is none: the session starts a new one, as in OpenHands.
      if (session.status !== "running" && session.status !== "paused") return []
      const box: RemoteBox = { ...session, runtime_id: session.runtime_id, url: session.url }
      const found: Found<RemoteBox> = {
        sandbox: box,
        id: box.runtime_id,
        // The key the API gave the server, else none to send (an empty key: the server checks none).
        tags: { [TAGS.managed]: "true", [TAGS.session]: sessionId, [TAGS.sessionKey]: session.session_api_key ?? "" },
        state: session.status,
        workspace: IMAGE_WORKSPACE
      }
      return [found]
    }),
    endpoint: (box, port, purpose) => {
      if (purpose === "server") return Effect.succeed({ url: baseUrlOf(box) })
      if (purpose === "vscode") {
        const { base, path } = remoteVsCodeBase(baseUrlOf(box), box.runtime_id)
        return Effect.succeed({ url: base, path })
      }
      const host = Object.entries(box.work_hosts ?? {}).find(([, hostPort]) => hostPort === port)?.[0]
      return host === undefined
        ? Effect.fail(
          providerError("Remote", `reach port ${port} of runtime ${box.runtime_id}`, {
            reason: "not-found",
            text: "the runtime API gave no work host for it"
          })
        )
        : Effect.succeed({ url: host })
    },
    exposedPorts: (box) => Object.values(box.work_hosts ?? {}),
    pause: {
      // What a pause keeps is the API's to decide (ours freezes a Docker container, but deletes a
      // Kubernetes pod and keeps its volume): only the files are promised.
      keepsMemory: false,
      pause: (box) => api.pause(box.runtime_id),
      resume
    },
    ...(options.pauseClosedRuntimes === false ? {} : { retain: (box) => api.pause(box.runtime_id) }),
    serverError: (box, keptAlive) => remoteServerErrors(keptAlive ? resume(box) : undefined)
  } satisfies Driver<RemoteBox>
})

export const remoteDriver: DriverDefinition<RemoteRuntimeOptions, RemoteBox> = {
  provider: "Remote",
  sandboxNoun: "runtime",
  kind: "remote",
  classify: classifyRemote,
  connect
}
