/**
 * DockerRuntime: the action server in a Docker container, reached over an
 * engine-assigned port on 127.0.0.1 with the shared HTTP client.
 *
 * The runtime image is built once per (base image, payload, Node, user) and
 * reused; containers are labelled with their session and owner and removed on
 * release (or kept with `keepRuntimeAlive`, and attached to again by a later
 * layer with the same session id). Each runtime holds a lease over its
 * containers (docker/ownerLease.ts): an orphan stops itself when it goes stale,
 * and a reaper removes it with its temporary workspace.
 */
import type Docker from "dockerode"
import { type Config, Context, Effect, Layer, Redacted } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { chownSync } from "node:fs"
import type { RuntimeSchedules } from "../client/policies.ts"
import { restrictsToWorkspace } from "../runtime/options.ts"
import { type InvalidOptionsError, RuntimeStartError } from "../schema/errors.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { sandboxServerEnv, serverCommand } from "../server/commandLine.ts"
import type { Disconnect, ProvisionedSandbox, Provisioner, ProvisionStatus } from "../services/Provisioner.ts"
import type { Runtime, WhilePaused } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"
import { dockerClient } from "./docker/client.ts"
import {
  type BeforeStart,
  explainStorageRefusal,
  findContainer,
  pauseContainer,
  removeWithWorkspace,
  type RunningContainer,
  SERVER_PORT,
  startContainer,
  temporaryWorkspaceOf
} from "./docker/container.ts"
import { IMAGE_NODE, IMAGE_SERVER, IMAGE_WORKSPACE, sandboxContainerSpec } from "./docker/containerSpec.ts"
import { DockerEngine, engineCall } from "./docker/engine.ts"
import { ImageBuilder } from "./docker/imageBuilder.ts"
import { LABEL, ownerLabels } from "./docker/labels.ts"
import { recordContainer } from "./docker/leaseRecords.ts"
import { forwardContainerLogs, logTail } from "./docker/logs.ts"
import { sandboxNetworkFor } from "./docker/network.ts"
import { checkDockerOptions, type CheckedDockerOptions } from "./docker/options.ts"
import {
  acquireOwnerLease,
  LEASE_IN_CONTAINER,
  LEASE_MOUNT,
  type OwnerLease,
  type OwnerLeaseOptions
} from "./docker/ownerLease.ts"
import { startReaper } from "./docker/reaper.ts"
import { putSessionKey, sessionKeyFileEnv, sessionKeyOf } from "./docker/sessionKey.ts"
import { imageRequirements } from "./internal/imageContext.ts"
import { provisionedLayer, type ProvisionedPool, provisionedPoolLayer, warmLayer } from "./internal/provisioned.ts"
import { containerUser, DEFAULT_SANDBOX_USERNAME, dockerSandboxUid } from "./internal/sandboxUser.ts"
import { toolCapabilities, VSCODE_PORT, vscodeEnv, vscodeUrls } from "./internal/serverTools.ts"
import { scopedWorkspace } from "./internal/workspace.ts"

/**
 * The shared options (services/RuntimeOptions.ts) and what is a container's own. `workspace` is
 * mounted at /workspace, and `restrictToWorkspace` confines file actions to /workspace inside the
 * container (the rest of the image is the container's, outside the agent's file tools as on the
 * other runtimes); `sessionId` also names the container, and one that exists is attached to.
 */
export interface DockerRuntimeOptions extends RuntimeOptions {
  /** Base image to build the runtime image from (default `sandbox.baseContainerImage`). */
  readonly baseImage?: string
  /**
   * The sandbox user's uid, and its gid (created in the image if missing, named `username`,
   * default `openhands`). Default: on an engine of this machine, the owner's own uid when it is
   * not root, else 74289, a uid no host account may have (the start fails if one does: give
   * another here); OpenHands' is 1000. Whoever has this uid on the engine's host can read the
   * sandbox's processes and files (internal/sandboxUser.ts).
   */
  readonly userId?: number
  readonly username?: string
  /** Limits; defaults 4 GiB of memory, 2 CPUs (and `pidsLimit` 4096 processes). */
  readonly memoryBytes?: number
  readonly cpus?: number
  /**
   * Disk quota of the container's writable layer (Docker's `--storage-opt size`; default none).
   * Only some engines enforce it (overlay2 on xfs mounted with `pquota`, btrfs, zfs, ...); others
   * refuse to create the container, and the start fails with a RuntimeStartError saying so.
   * The bind-mounted workspace is the host's disk either way (see docs/runtimes/docker.md).
   */
  readonly storageBytes?: number
  /** Extra container ports to publish on 127.0.0.1 (reported in `info.urls` as `app-<port>`). */
  readonly appPorts?: ReadonlyArray<number>
  readonly containerNamePrefix?: string
  /** The owner's lease over its containers and the reaper's pace (defaults: renew 2 s, stale 20 s, reap 30 s). */
  readonly ownerLease?: OwnerLeaseOptions
  /** Replacements for the HTTP transport's retry and `/alive` wait schedules (`retrySchedule`, `aliveSchedule`). */
  readonly schedules?: RuntimeSchedules
  /** Calls made while paused: fail at once with `RuntimePausedError` (default), or `"wait"` for `resume`. */
  readonly whilePaused?: WhilePaused
}

const WORKSPACE = IMAGE_WORKSPACE

/** Container options for a new sandbox: the server command, its environment and DockerRuntime's labels. */
const containerSpec = (input: {
  readonly name: string
  readonly image: string
  readonly sessionId: string
  readonly sessionKey: string
  readonly workspace: string
  /** The workspace, when we created it (so whoever removes the container removes it too). */
  readonly temporaryWorkspace: string | undefined
  readonly options: DockerRuntimeOptions
  readonly sandbox: SandboxConfig
  readonly uid: number
  readonly username: string
  /** The owner's lease, watched by the server; null for a kept-alive container, which outlives its owner. */
  readonly lease: OwnerLease | null
  /** The sandboxes' network (docker/network.ts). */
  readonly network: string
}): Docker.ContainerCreateOptions => {
  const { options, sandbox } = input
  // VS Code's port only with the plugin (and not on the host's network, where 8001 may be anyone's).
  const vscode = options.vscode === true && !sandbox.useHostNetwork
  return sandboxContainerSpec({
    name: input.name,
    image: input.image,
    sessionId: input.sessionId,
    command: serverCommand({
      node: IMAGE_NODE,
      entry: IMAGE_SERVER,
      port: sandbox.useHostNetwork ? 0 : SERVER_PORT,
      workingDir: WORKSPACE,
      // The server defaults to loopback: in its own network namespace it must listen on all
      // interfaces to be reached through the published port (with the key it was given).
      host: sandbox.useHostNetwork ? "127.0.0.1" : "0.0.0.0",
      username: input.username,
      userId: input.uid,
      tools: options,
      restrictToWorkspace: restrictsToWorkspace(options),
      ownerLease: input.lease === null ? undefined : LEASE_IN_CONTAINER
    }),
    env: sandboxServerEnv(sandbox, options, input.sessionId, {
      // Not the key itself: where the server finds it (docker/sessionKey.ts).
      ...sessionKeyFileEnv,
      ...(vscode ? vscodeEnv(options) : {})
    }),
    user: containerUser(input.uid),
    workingDir: WORKSPACE,
    labels: {
      [LABEL.keepAlive]: String(sandbox.keepRuntimeAlive),
      [LABEL.sessionKey]: input.sessionKey,
      [LABEL.temporaryWorkspace]: input.temporaryWorkspace,
      [LABEL.ownerLease]: input.lease?.dir,
      ...ownerLabels()
    },
    ports: [SERVER_PORT, ...(vscode ? [VSCODE_PORT] : []), ...(options.appPorts ?? [])],
    binds: [
      `${input.workspace}:${WORKSPACE}:rw`,
      ...(input.lease === null ? [] : [`${input.lease.dir}:${LEASE_MOUNT}:ro`])
    ],
    limits: options,
    sandbox,
    network: input.network
  })
}

/**
 * Where the client reaches the server. On a local Linux engine: the container's
 * bridge address, skipping docker-proxy (~1 ms a request, and it stalls early
 * connections); elsewhere the port published on 127.0.0.1; with host networking
 * the port the server announced in its log.
 */
const serverUrl = (running: RunningContainer, hostNetwork: boolean, localEngine: boolean) =>
  Effect.gen(function*() {
    if (!hostNetwork && localEngine && running.ip !== "") return `http://${running.ip}:${SERVER_PORT}`
    if (!hostNetwork) return `http://127.0.0.1:${running.ports[SERVER_PORT]}`
    for (let attempt = 0; attempt < 300; attempt++) {
      const log = yield* engineCall(
        "read the server log",
        () => running.container.logs({ stdout: true, stderr: false })
      )
      const port = /effect-sandbox-server listening \{[^}]*"port":(\d+)/.exec(log.toString("utf8"))?.[1]
      if (port !== undefined) return `http://127.0.0.1:${port}`
      yield* Effect.sleep("50 millis")
    }
    return yield* new RuntimeStartError({ message: `The action server in ${running.name} never announced its port.` })
  })

/** Fails (with the exit code and last log lines) if the container stops before its server answers. */
const exitedAtStartup = (running: RunningContainer) =>
  Effect.gen(function*() {
    const exit = yield* Effect.promise(() => running.container.wait().catch(() => ({ StatusCode: -1 })))
    const log = yield* logTail(running.container)
    return yield* new RuntimeStartError({
      message: `The container ${running.name} exited with code ${exit.StatusCode} before its action server answered. ` +
        `Its last log lines:\n${log}`
    })
  })

/** Why the container stopped, for a disconnect: out of memory, or its exit code (undefined while it runs). */
const whyStopped = (running: RunningContainer): Effect.Effect<Disconnect | undefined> =>
  Effect.promise(() =>
    running.container.inspect().then(
      (info): Disconnect | undefined =>
        info.State.OOMKilled
          ? {
            outOfMemory: true,
            message: `the container was killed for exceeding its memory limit (${info.HostConfig.Memory} bytes)`
          }
          : info.State.Running
          ? undefined
          : { outOfMemory: false, message: `the container exited with code ${info.State.ExitCode}` },
      (): Disconnect => ({ outOfMemory: false, message: "the container is gone" })
    )
  )

/** The uid a container runs as, from its `User` (`uid` or `uid:gid`), else `fallback`. */
const containerUid = (user: string | undefined, fallback: number) => {
  const uid = /^(\d+)(:\d+)?$/.exec(user ?? "")?.[1]
  return uid === undefined ? fallback : Number(uid)
}

/**
 * Start (or attach to) the container of a session, in the current scope, until its server
 * listens (the builder waits for it to answer). `onStatus` reports BUILDING_RUNTIME.
 */
const startSandbox = (
  options: DockerRuntimeOptions,
  sandbox: SandboxConfig,
  lease: OwnerLease,
  uid: number,
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const { local } = yield* DockerEngine
    const docker = yield* dockerClient
    const sessionId = options.sessionId ?? randomUUID()
    const name = `${options.containerNamePrefix ?? "effect-sandbox"}-${sessionId}`
    const username = options.username ?? DEFAULT_SANDBOX_USERNAME
    const keepAlive = sandbox.keepRuntimeAlive

    // Before every start, the server's key goes in as a file it reads and removes, its user's: a
    // kept container's own, which may be another than this layer's (made with another userId,
    // or before this default).
    const copyKeyIn =
      (key: (labels: Readonly<Record<string, string>>) => string): BeforeStart => (container, labels, user) =>
        putSessionKey(container, key(labels), containerUid(user, uid))
    const existing = yield* findContainer(name, copyKeyIn((labels) => sessionKeyOf(labels, [])))
    let running: RunningContainer
    let sessionKey: string
    if (existing !== null) {
      sessionKey = sessionKeyOf(existing.labels, existing.env)
      running = existing
      if (!keepAlive) {
        yield* Effect.addFinalizer(() =>
          removeWithWorkspace(existing.container, temporaryWorkspaceOf(existing.name, existing.labels))
        )
      }
    } else {
      // The workspace first: one that cannot be created is an InvalidOptionsError before any build.
      const workspace = yield* scopedWorkspace(
        { workspace: options.workspace, keepWorkspace: keepAlive || options.keepWorkspace === true },
        `docker-${sessionId.slice(0, 8)}`,
        "DockerRuntime options"
      )
      const image = sandbox.runtimeContainerImage ?? (yield* (yield* ImageBuilder).ensure(
        {
          baseImage: options.baseImage ?? sandbox.baseContainerImage,
          userId: uid,
          username,
          forceRebuild: sandbox.forceRebuildRuntime,
          requires: imageRequirements(options, sandbox)
        },
        onStatus("BUILDING_RUNTIME")
      ))
      // A workspace we created belongs to the sandbox user, who must be able to write it; the
      // owner-only directory around it (internal/workspace.ts) keeps other host users out.
      if (options.workspace === undefined && process.getuid?.() === 0) chownSync(workspace, uid, uid)
      sessionKey = randomBytes(24).toString("base64url")
      const sandboxNetwork = yield* sandboxNetworkFor(sandbox)
      // A kept one is not: neither the reaper nor a later release may remove it.
      const temporaryWorkspace = options.workspace === undefined && options.keepWorkspace !== true
        ? workspace
        : undefined
      // The reaper acts only on what the lease records (leaseRecords.ts): recorded before it exists.
      if (!keepAlive) yield* recordContainer(lease.dir, name, temporaryWorkspace)
      running = yield* startContainer(
        containerSpec({
          name,
          image,
          sessionId,
          sessionKey,
          workspace,
          temporaryWorkspace,
          options,
          sandbox,
          uid,
          username,
          lease: keepAlive ? null : lease,
          network: sandboxNetwork
        }),
        () => keepAlive,
        copyKeyIn(() => sessionKey)
      ).pipe(Effect.mapError(explainStorageRefusal(options.storageBytes)))
      for (const network of sandbox.additionalNetworks) {
        yield* engineCall(
          `connect ${name} to network ${network}`,
          () => docker.getNetwork(network).connect({ Container: running.id })
        )
      }
    }
    const baseUrl = yield* Effect.raceFirst(serverUrl(running, sandbox.useHostNetwork, local), exitedAtStartup(running))
    const sessionApiKey = Redacted.make(sessionKey)
    return {
      id: sessionId,
      baseUrl,
      sessionApiKey,
      workspace: WORKSPACE,
      urls: {
        // What users reach: the port published on 127.0.0.1 (the client may take a shorter route).
        actionServer: sandbox.useHostNetwork ? baseUrl : `http://127.0.0.1:${running.ports[SERVER_PORT]}`,
        ...Object.fromEntries(
          (options.appPorts ?? []).map((p) => [`app-${p}`, `http://127.0.0.1:${running.ports[p]}`])
        )
      },
      capabilities: toolCapabilities(options, { pause: true }),
      aliveTimeout: "60 seconds",
      startFailure: exitedAtStartup(running),
      pause: pauseContainer(running.container, running.name),
      resume: engineCall(`unpause ${running.name}`, () => running.container.unpause()).pipe(Effect.asVoid),
      disconnect: {
        stopped: Effect.promise(() => running.container.wait().catch(() => undefined)),
        explain: whyStopped(running)
      },
      handOver: Effect.gen(function*() {
        yield* forwardContainerLogs(docker, running.container, running.name)
        const vscodePort = running.ports[VSCODE_PORT]
        return yield* vscodeUrls(
          options,
          { baseUrl, sessionApiKey, workspace: WORKSPACE },
          vscodePort === undefined ? undefined : `http://127.0.0.1:${vscodePort}`
        )
      })
    } satisfies ProvisionedSandbox
  })

/**
 * The Docker provisioner for one layer or pool: the owner's lease over its containers (acquired
 * first, released last: it outlives the containers it covers) and the reaper, then a container per
 * `provision`. Its options were checked already (`checked`).
 */
const dockerProvisioner = (options: DockerRuntimeOptions) => (sandbox: SandboxConfig) =>
  Effect.gen(function*() {
    const uid = yield* dockerSandboxUid(options.userId, (yield* DockerEngine).local)
    const lease = yield* acquireOwnerLease(options.ownerLease)
    yield* startReaper(options.ownerLease?.reapEvery)
    return {
      kind: "docker",
      provision: (onStatus) => startSandbox(options, sandbox, lease, uid, onStatus)
    } satisfies Provisioner<DockerEngine | ImageBuilder>
  })

/**
 * `layer` once `options` are checked: a bad one fails before the engine is reached (its layer pings
 * it), so nothing is built, made or created for options that cannot work.
 */
const checked = <A, E, R>(options: CheckedDockerOptions, layer: Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.as(checkDockerOptions(options), layer))

/** Warm containers waiting for a runtime. */
export class DockerSandboxPool extends Context.Service<DockerSandboxPool, ProvisionedPool>()(
  "effect-sandbox/DockerSandboxPool"
) {}

export const DockerRuntime = {
  /** A runtime in a Docker container (created, or attached to by session id); removed on release unless kept alive. */
  layer: (
    options: DockerRuntimeOptions = {}
  ): Layer.Layer<Runtime, RuntimeStartError | InvalidOptionsError | Config.ConfigError> =>
    checked(
      options,
      provisionedLayer(options, dockerProvisioner(options)).pipe(
        Layer.provide(ImageBuilder.layer),
        Layer.provide(DockerEngine.layer)
      )
    ),

  /**
   * Keep `warmContainers` containers started (server alive) in the background, for
   * `layerWarm`. Each taken container belongs to its runtime and is removed with it.
   */
  layerPool: (
    options: DockerRuntimeOptions & { readonly warmContainers: number }
  ): Layer.Layer<DockerSandboxPool, RuntimeStartError | InvalidOptionsError | Config.ConfigError> => {
    // Pool members get fresh session ids; a fixed one would name one container only.
    const { sessionId: _, warmContainers, ...shared } = options
    return checked(
      { ...shared, warmContainers },
      provisionedPoolLayer(DockerSandboxPool, warmContainers, "Docker container", shared, dockerProvisioner(shared))
        .pipe(
          Layer.provide(ImageBuilder.layer),
          Layer.provide(DockerEngine.layer)
        )
    )
  },

  /** A runtime on a container taken from the pool (ready at once when one is warm); the pool refills. */
  layerWarm: (): Layer.Layer<Runtime, never, DockerSandboxPool> => warmLayer(DockerSandboxPool, Effect.succeed)
} as const
