/**
 * The runtime API's sandboxes on a Docker engine. Each is a container made through the engine
 * client DockerRuntime's driver uses (src/engines/docker/: the sandbox container's create options,
 * its start and removal, the session key's digest, the network, the image builder) whose labels carry
 * everything the API must remember: session id, runtime id, session key, resource factor. Its
 * status is the engine's (running, paused, exited). Nothing is held in this process, so the
 * sandboxes outlive it and a restarted API server finds every one of them. Every label of ours is
 * written at create (labels.ts), so an image's `LABEL effect-sandbox.session-key=…` never hands a
 * sandbox a key of its choosing, and DockerRuntime's containers (their API labels empty) are never
 * adopted; nor is a container someone else ran from such an image (`isOurs`: its name).
 */
import type Docker from "dockerode"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { dockerClient } from "../engines/docker/client.ts"
import { pauseContainer, publishedPorts, removeContainer, startContainer } from "../engines/docker/container.ts"
import {
  DEFAULT_LIMITS,
  IMAGE_NODE,
  IMAGE_SERVER,
  IMAGE_WORKSPACE,
  sandboxContainerSpec
} from "../engines/docker/containerSpec.ts"
import { DockerEngine, engineCall } from "../engines/docker/engine.ts"
import { ImageBuilder } from "../engines/docker/imageBuilder.ts"
import { LABEL, labelOf, ownerLabels } from "../engines/docker/labels.ts"
import { logTail } from "../engines/docker/logs.ts"
import { sandboxNetworkFor } from "../engines/docker/network.ts"
import { containerUser, DEFAULT_SANDBOX_USERNAME, sandboxUid } from "../runtimeImage/sandboxUser.ts"
import type { InvalidOptionsError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { serverCommand, serverEnv } from "../server/commandLine.ts"
import { sessionKeyDigestEnv } from "../server/sessionKey.ts"
import { checkContainerLimits } from "./dockerLimits.ts"
import { ApiError, internalError } from "./errors.ts"
import {
  type PodState,
  type PodStatus,
  type Sandbox,
  SANDBOX_APP_PORTS,
  SANDBOX_SERVER_PORT,
  Sandboxes,
  type SessionStatus
} from "./sandboxes.ts"
import type { StartRequest } from "./schemas.ts"
import { withSessionStart } from "./sessionStart.ts"
import { servesVsCode, VSCODE_PORT, withVsCodePort } from "./vscodePlugin.ts"

export interface DockerSandboxesOptions {
  /** `SANDBOX_*`: the base image our runtime image is built from, volumes, GPUs, raw create options. */
  readonly sandbox: SandboxConfig
  /** Most sandboxes running or paused at once (429 beyond); unlimited when undefined. */
  readonly maxSandboxes?: number | undefined
  /** What `resource_factor` 1 gets; a factor multiplies both (CPUs capped at the engine's). */
  readonly cpus?: number | undefined
  readonly memoryBytes?: number | undefined
  /**
   * Container names are `<prefix>-<session id>` (default `effect-sandbox-api`); the prefix is also a
   * label, and this API sees (lists, counts, finds, sweeps) only the sandboxes carrying it.
   */
  readonly containerNamePrefix?: string | undefined
  /**
   * Serve VS Code to sandboxes whose command asks for the `vscode` plugin: `VSCODE_PORT` set and the
   * port published on 127.0.0.1 (proxy mode, where the API server forwards to it; vscodePlugin.ts).
   */
  readonly vscode?: boolean | undefined
  /**
   * The uid and gid our server runs as in the sandboxes (`--sandbox-uid`); default 74289, refused
   * at start when an account of this host has it (runtimeImage/sandboxUser.ts).
   */
  readonly sandboxUid?: number | undefined
}

/** The OCI runtime for OpenHands' `runtime_class`. */
const ociRuntimes = { "sysbox-runc": "sysbox-runc", sysbox: "sysbox-runc", gvisor: "runsc" } as const

const internal = internalError()

const statusOf = (state: Docker.ContainerInspectInfo["State"]): SessionStatus =>
  state.Paused ? "paused" : state.Running ? "running" : "stopped"

/** The sandbox a container is, read from its labels, state and published ports. */
const sandboxOf = (info: Docker.ContainerInspectInfo): Sandbox => {
  const labels = info.Config.Labels ?? {}
  const status = statusOf(info.State)
  const ports = publishedPorts(info)
  const serverPort = ports[SANDBOX_SERVER_PORT]
  const vscodePort = ports[VSCODE_PORT]
  return {
    runtimeId: labels[LABEL.runtimeId] ?? "",
    sessionId: labels[LABEL.session] ?? "",
    sessionApiKey: Redacted.make(labels[LABEL.sessionKey] ?? ""),
    status,
    serverUrl: status === "stopped" || serverPort === undefined ? undefined : `http://127.0.0.1:${serverPort}`,
    workHosts: Object.fromEntries(
      SANDBOX_APP_PORTS.flatMap((p) => ports[p] === undefined ? [] : [[`http://127.0.0.1:${ports[p]}`, p]])
    ),
    vscodeUrl: status === "stopped" || vscodePort === undefined ? undefined : `http://127.0.0.1:${vscodePort}`,
    image: info.Config.Image,
    createdAt: labels[LABEL.createdAt] ?? info.Created,
    resourceFactor: Number(labels[LABEL.resourceFactor] ?? "1")
  }
}

/** The server answers `/alive` (within a second): the sandbox is ready. */
const answersAlive = (serverUrl: string) =>
  Effect.promise(() =>
    fetch(`${serverUrl}/alive`, { signal: AbortSignal.timeout(1_000) }).then(
      async (response) => {
        await response.body?.cancel()
        return response.ok
      },
      () => false
    )
  )

/** `pod_status` of a container, Kubernetes' words for Docker's states; an exited one's last log lines. */
const podStateOf = (
  container: Docker.Container,
  info: Docker.ContainerInspectInfo,
  sandbox: Sandbox
): Effect.Effect<PodState> =>
  Effect.gen(function*() {
    const restart = { restartCount: info.RestartCount ?? 0 }
    const state = info.State
    const ended = (podStatus: PodStatus) =>
      Effect.map(logTail(container), (output): PodState => ({
        ...restart,
        podStatus,
        restartReasons: [reasonOf(state)],
        ...(output === "" ? {} : { lastOutput: output })
      }))
    if (state.Restarting) return yield* ended("crashloopbackoff")
    if (state.Paused) return { ...restart, podStatus: "paused", restartReasons: [] }
    if (state.Running) {
      const ready = sandbox.serverUrl !== undefined && (yield* answersAlive(sandbox.serverUrl))
      return { ...restart, podStatus: ready ? "ready" : "running", restartReasons: [] }
    }
    if (state.Status === "created") return { ...restart, podStatus: "pending", restartReasons: [] }
    return yield* ended("failed")
  })

const reasonOf = (state: Docker.ContainerInspectInfo["State"]): string =>
  state.OOMKilled ? "OOMKilled" : `exited with code ${state.ExitCode}${state.Error ? `: ${state.Error}` : ""}`

/** The Docker backend of the runtime API, with the engine and image builder it needs. */
export const dockerSandboxes = (
  options: DockerSandboxesOptions
): Layer.Layer<Sandboxes, InvalidOptionsError, DockerEngine | ImageBuilder> =>
  Layer.effect(
    Sandboxes,
    Effect.gen(function*() {
      yield* checkContainerLimits(options, "runtime API options")
      const docker = yield* dockerClient
      const builder = yield* ImageBuilder
      const engine = yield* DockerEngine
      const prefix = options.containerNamePrefix ?? "effect-sandbox-api"
      // What the engine has: `resource_factor` scales the limits, never beyond these (a factor of 16
      // asked 64 GiB of a 24 GiB host, so the limit limited nothing).
      const engineHas = yield* Effect.promise(() =>
        docker.info().then(
          (i) => ({ cpus: Number(i.NCPU) || Infinity, memoryBytes: Number(i.MemTotal) || Infinity }),
          () => ({ cpus: Infinity, memoryBytes: Infinity })
        )
      )

      /**
       * A container this API made, beyond what the label filter says: a runtime id (the filter
       * matches a present key, an empty one too) and the name `create` gives, which no image can
       * set, so that a container someone else ran from an image carrying our labels is not adopted.
       */
      const isOurs = (info: Docker.ContainerInspectInfo) =>
        labelOf(info.Config.Labels, LABEL.runtimeId) !== undefined &&
        info.Name === `/${prefix}-${labelOf(info.Config.Labels, LABEL.session)}`

      // No bind mounts here, so no owner's uid to share: the default unless told, checked on a local engine.
      const uid = yield* sandboxUid(options.sandboxUid, engine.local, "runtime API options", "--sandbox-uid")

      const inspectAll = (filters: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const found = yield* engineCall(
            "list containers",
            () =>
              docker.listContainers({
                all: true,
                filters: { label: [`${LABEL.runtimeApi}=${prefix}`, LABEL.runtimeId, ...filters] }
              })
          )
          const infos = yield* Effect.forEach(
            found,
            (c) => Effect.promise(() => docker.getContainer(c.Id).inspect().catch(() => null))
          )
          return infos.filter((i): i is Docker.ContainerInspectInfo => i !== null && isOurs(i))
        }).pipe(Effect.mapError(internal))

      const first = (filter: string) =>
        Effect.map(inspectAll([filter]), (infos) => infos[0] === undefined ? undefined : sandboxOf(infos[0]))

      const bySession = (sessionId: string) => first(`${LABEL.session}=${sessionId}`)
      const byRuntime = (runtimeId: string) => first(`${LABEL.runtimeId}=${runtimeId}`)
      const list = Effect.map(inspectAll([]), (infos) => infos.map(sandboxOf))

      const containerOf = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          const infos = yield* inspectAll([`${LABEL.runtimeId}=${sandbox.runtimeId}`])
          const info = infos[0]
          if (info === undefined) {
            return yield* new ApiError({ status: 404, detail: `Runtime ${sandbox.runtimeId} not found` })
          }
          return { info, container: docker.getContainer(info.Id) }
        })

      /** Our runtime image, built once from `sandbox.baseContainerImage` (or the configured runtime image). */
      const defaultImage = Effect.suspend(() =>
        options.sandbox.runtimeContainerImage !== null
          ? Effect.succeed(options.sandbox.runtimeContainerImage)
          : builder.ensure({
            baseImage: options.sandbox.baseContainerImage,
            userId: uid,
            username: DEFAULT_SANDBOX_USERNAME,
            forceRebuild: false
          }).pipe(Effect.mapError(internal))
      )

      const imageExists = (image: string) =>
        Effect.promise(() => docker.getImage(image).inspect().then(() => true, () => false))

      /** Create and start the container of a new sandbox (its runtime id); a failure leaves no container. */
      /** What `resource_factor` gets: the server's limits multiplied, never beyond what the engine has. */
      const limitsOf = (factor: number) => ({
        memoryBytes: Math.min(
          Math.round((options.memoryBytes ?? DEFAULT_LIMITS.memoryBytes) * factor),
          engineHas.memoryBytes
        ),
        cpus: Math.min((options.cpus ?? DEFAULT_LIMITS.cpus) * factor, engineHas.cpus)
      })

      const create = Effect.fn("runtimeApi.create")(function*(request: StartRequest) {
        const factor = request.resource_factor ?? 1
        const limits = limitsOf(factor)
        yield* checkContainerLimits(limits, `limits for resource_factor ${factor}`).pipe(
          Effect.mapError((error) => new ApiError({ status: 400, detail: error.message }))
        )
        const image = request.image ?? (yield* defaultImage)
        if (!(yield* imageExists(image))) {
          return yield* new ApiError({ status: 400, detail: `Image ${image} does not exist on the Docker engine` })
        }
        const runtimeId = `rt-${randomBytes(12).toString("hex")}`
        const key = randomBytes(24).toString("base64url")
        const ours = request.command === undefined
        const vscode = servesVsCode(request, options.vscode === true)
        const startupEnv = withVsCodePort({ ...options.sandbox.runtimeStartupEnvVars, ...request.environment }, vscode)
        const network = yield* sandboxNetworkFor(options.sandbox).pipe(
          Effect.provideService(DockerEngine, engine),
          Effect.mapError(internal)
        )
        const spec = sandboxContainerSpec({
          name: `${prefix}-${request.session_id}`,
          image,
          sessionId: request.session_id,
          // Ours: the action server on 60000, given only the key's digest (server/sessionKey.ts).
          // Given: exactly that command, with the key where OpenHands' server reads it.
          command: request.command ?? serverCommand({
            node: IMAGE_NODE,
            entry: IMAGE_SERVER,
            port: SANDBOX_SERVER_PORT,
            workingDir: IMAGE_WORKSPACE,
            host: "0.0.0.0",
            username: DEFAULT_SANDBOX_USERNAME,
            userId: uid,
            tools: {},
            restrictToWorkspace: true
          }),
          env: ours
            ? serverEnv({
              env: startupEnv,
              tools: {},
              sessionId: request.session_id,
              noChangeTimeoutSeconds: 10,
              extra: sessionKeyDigestEnv(key)
            })
            : { ...startupEnv, SESSION_API_KEY: key },
          workingDir: request.working_dir ?? (ours ? IMAGE_WORKSPACE : undefined),
          user: ours ? containerUser(uid) : undefined,
          labels: {
            // Outlives its owner (this process): the DockerRuntime reaper leaves it alone.
            [LABEL.keepAlive]: "true",
            [LABEL.sessionKey]: key,
            [LABEL.runtimeApi]: prefix,
            [LABEL.runtimeId]: runtimeId,
            [LABEL.resourceFactor]: String(factor),
            ...ownerLabels()
          },
          // VS Code's port only with the plugin: what is not published, the proxy cannot reach.
          ports: [SANDBOX_SERVER_PORT, ...SANDBOX_APP_PORTS, ...(vscode ? [VSCODE_PORT] : [])],
          binds: [],
          limits,
          sandbox: options.sandbox,
          network,
          ociRuntime: request.runtime_class == null ? undefined : ociRuntimes[request.runtime_class]
        })
        let started = false
        yield* Effect.scoped(
          startContainer(spec, () => started, () => Effect.void).pipe(
            Effect.tap(() => Effect.sync(() => started = true))
          )
        ).pipe(
          Effect.provideService(DockerEngine, engine),
          Effect.mapError(internalError(Object.values(request.environment ?? {})))
        )
        return runtimeId
      })

      const pause = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          const { container, info } = yield* containerOf(sandbox)
          if (info.State.Paused) return
          if (!info.State.Running) {
            return yield* new ApiError({ status: 409, detail: `Runtime ${sandbox.runtimeId} is stopped` })
          }
          yield* pauseContainer(container, info.Name).pipe(Effect.mapError(internal))
        })

      const resume = (sandbox: Sandbox) =>
        Effect.gen(function*() {
          const { container, info } = yield* containerOf(sandbox)
          if (info.State.Running && !info.State.Paused) return
          if (!info.State.Paused) {
            return yield* new ApiError({
              status: 409,
              detail: `Runtime ${sandbox.runtimeId} is stopped: start the session again with /start`
            })
          }
          yield* engineCall(`unpause ${info.Name}`, () => container.unpause()).pipe(Effect.mapError(internal))
        })

      const stop = (sandbox: Sandbox) =>
        Effect.flatMap(containerOf(sandbox), ({ container }) => removeContainer(container))

      const podState = (sandbox: Sandbox) =>
        Effect.flatMap(containerOf(sandbox), ({ container, info }) => podStateOf(container, info, sandboxOf(info)))

      return yield* withSessionStart(
        { kind: "docker", bySession, byRuntime, list, podState, pause, resume, stop },
        create,
        options.maxSandboxes
      )
    })
  )
