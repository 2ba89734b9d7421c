/**
 * The Docker driver (services/Driver.ts): a sandbox is a container of the runtime image (built
 * in `create` when missing, reported as BUILDING_RUNTIME) whose command is the action server, given
 * its key's digest in its environment (engines/docker/sessionKey.ts), on the sandboxes' network with no capability, the
 * host workspace mounted at /workspace, reached on an engine-assigned port of 127.0.0.1 (or, on a
 * local engine, the bridge address). Pause is `docker pause` (memory survives); a snapshot is an
 * image committed with the workspace inside (snapshot.ts). Owner liveness is
 * the driver's own lease (ownerLease.ts, reaper.ts): docs/security.md says why pids cannot decide.
 */
import type Docker from "dockerode"
import { Deferred, Effect, Schedule } from "effect"
import { chownSync } from "node:fs"
import { classifyDocker } from "../../engines/docker/classify.ts"
import {
  inspectRunning,
  pauseContainer,
  type RunningContainer,
  SERVER_PORT,
  startContainer
} from "../../engines/docker/container.ts"
import { IMAGE_WORKSPACE } from "../../engines/docker/containerSpec.ts"
import { gatewayPorts, removeEgress, startGateway } from "../../engines/docker/egress.ts"
import { connectEngine, DockerEngine, engineCall } from "../../engines/docker/engine.ts"
import { ensureRuntimeImage } from "../../engines/docker/imageBuilder.ts"
import { LABEL, labelOf, type Labels } from "../../engines/docker/labels.ts"
import { forwardContainerLogs, logTail } from "../../engines/docker/logs.ts"
import { sandboxNetworkFor } from "../../engines/docker/network.ts"
import { putSessionKey, readsKeyFile, sessionKeyOf } from "../../engines/docker/sessionKey.ts"
import { unsupported } from "../../hosted/options.ts"
import { serverExitedMessage } from "../../hosted/startFailure.ts"
import { parseEdgeSecrets } from "../../network/edgeSecrets.ts"
import { parseNetworkPolicy } from "../../network/policy.ts"
import { scopedWorkspace, temporaryWorkspace } from "../../runtime/hostWorkspace.ts"
import { imageRequirements } from "../../runtimeImage/imageContext.ts"
import { DEFAULT_SANDBOX_USERNAME, dockerSandboxUid } from "../../runtimeImage/sandboxUser.ts"
import { ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { LISTENING_PREFIX } from "../../server/announce.ts"
import type { Driver, DriverDefinition, Found, SandboxSpec, SandboxState } from "../../services/Driver.ts"
import { reportStart } from "../../services/StartProgress.ts"
import { restrictEgress } from "./egressBox.ts"
import { recordContainer } from "./leaseRecords.ts"
import { checkDockerOptions, type DockerRuntimeOptions } from "./options.ts"
import { acquireOwnerLease } from "./ownerLease.ts"
import { reapOrphans, reapUnlessCovered } from "./reaper.ts"
import { containerSpec, explainStorageRefusal } from "./sandboxContainer.ts"
import { dockerSnapshots, restoreWorkspace } from "./snapshot.ts"
import { removeTemporaryWorkspace, removeWithWorkspace, temporaryWorkspaceOf } from "./workspaceRemoval.ts"

/** One sandbox container: its handle, name, labels, and the temporary workspace removed with it. */
export interface DockerBox {
  readonly container: Docker.Container
  readonly name: string
  readonly labels: Labels
  readonly workspace: string | undefined
  readonly hostNetwork: boolean
  /** Its address and published ports as of its last start (a restart gives it new ones). */
  reached: Pick<RunningContainer, "ip" | "ports">
  /** The server's URL on the host's network (the port it announced), once read. */
  announced?: string
}

/** The uid a container runs as, from its `User` (`uid` or `uid:gid`), else `fallback`. */
const containerUid = (user: string | undefined, fallback: number) => {
  const uid = /^(\d+)(:\d+)?$/.exec(user ?? "")?.[1]
  return uid === undefined ? fallback : Number(uid)
}

/** The driver's handle of a container it inspected (its temporary workspace aside). */
const boxOf = (running: RunningContainer): Omit<DockerBox, "workspace"> => ({
  container: running.container,
  name: running.name,
  labels: running.labels,
  hostNetwork: running.hostNetwork,
  reached: { ip: running.ip, ports: running.ports }
})

/**
 * A sandbox behind a gateway (the `network` option, engines/docker/egress.ts) is reached on the
 * gateway's published ports, never at its own address (the host has none on its network).
 */
const throughGateway = <B extends Omit<DockerBox, "workspace">>(box: B) =>
  Effect.map(gatewayPorts(box.name), (ports): B => ports === undefined ? box : { ...box, reached: { ip: "", ports } })

/** A container's state in the contract's words. */
const stateOf = (state: string): Found<DockerBox>["state"] =>
  state === "running" ? "running" : state === "paused" ? "paused" : state === "dead" ? "gone" : "stopped"

const connect = Effect.fn("DockerRuntime.connect")(function*(options: DockerRuntimeOptions) {
  yield* checkDockerOptions(options)
  const egress = yield* parseNetworkPolicy("DockerRuntime", options.network)
  const secrets = yield* parseEdgeSecrets("DockerRuntime", options.secrets, egress)
  yield* unsupported(
    "DockerRuntime",
    options,
    ["lifetime", "idleTimeout"],
    "a Docker container has no clock of its own (an orphan stops once its owner's lease is stale)"
  )
  // A given workspace is made now: one that cannot be is an InvalidOptionsError before any build.
  const given = options.workspace === undefined
    ? undefined
    : yield* scopedWorkspace({ workspace: options.workspace }, "docker", "DockerRuntime options")
  const engine = yield* connectEngine
  const withEngine = Effect.provideService(DockerEngine, engine)
  const docker = engine.docker as Docker
  const reapPass = yield* reapUnlessCovered(engine.address, reapOrphans)
  const uid = yield* dockerSandboxUid(options.userId, engine.local)
  // Acquired before any container and released after the last: it outlives what it covers.
  const lease = yield* acquireOwnerLease(options.ownerLease)
  const prefix = options.containerNamePrefix ?? "effect-sandbox"
  const keepWorkspace = options.keepWorkspace === true

  /** The container made for `spec`: the image built first if missing, a snapshot's workspace copied in before it starts. */
  const create = Effect.fn("DockerRuntime.create")(function*(spec: SandboxSpec) {
    const name = `${prefix}-${spec.sessionId}`
    const { sandbox } = spec
    // A sandbox from a snapshot (a fork of a layer with a workspace of its own) gets its own
    // directory, filled from the snapshot: the given one is its source's, which it must not touch.
    const own = spec.fromSnapshot === undefined ? given : undefined
    const made = own === undefined ? yield* temporaryWorkspace(`docker-${spec.sessionId.slice(0, 8)}`) : undefined
    const workspace = own ?? made!
    // A kept one is not: neither the reaper nor a later release may remove it.
    const temporary = made !== undefined && !keepWorkspace ? made : undefined
    const started = Effect.gen(function*() {
      const ready = spec.fromSnapshot ?? sandbox.runtimeContainerImage
      // The image and the network are independent lookups (engine round trips): side by side.
      const [image, network] = yield* Effect.all([
        ready !== undefined && ready !== null ? Effect.succeed(ready) : ensureRuntimeImage(
          {
            baseImage: options.baseImage ?? sandbox.baseContainerImage,
            userId: spec.user.id,
            username: spec.user.name,
            forceRebuild: sandbox.forceRebuildRuntime,
            requires: imageRequirements(options, sandbox)
          },
          spec.onStatus("BUILDING_RUNTIME")
        ),
        sandboxNetworkFor(sandbox)
      ], { concurrency: "unbounded" })
      // A workspace we created belongs to the sandbox user, who must be able to write it; the
      // owner-only directory around it (runtime/hostWorkspace.ts) keeps other host users out.
      if (made !== undefined && process.getuid?.() === 0) chownSync(made, spec.user.id, spec.user.id)
      const leaseDir = spec.keepAlive ? undefined : lease.dir
      // The reaper acts only on what the lease records (leaseRecords.ts): recorded before it exists.
      if (leaseDir !== undefined) yield* recordContainer(leaseDir, name, temporary)
      yield* reportStart({ phase: "creating", detail: `container ${name}` })
      let kept = false
      const createOptions = yield* restrictEgress(
        egress,
        containerSpec({
          name,
          image,
          spec,
          workspace,
          temporaryWorkspace: temporary,
          options,
          lease: leaseDir,
          network
        }),
        sandbox,
        spec.user.id,
        secrets
      )
      const running = yield* Effect.scoped(
        startContainer(
          createOptions,
          () => kept,
          (container) => spec.fromSnapshot === undefined ? Effect.void : restoreWorkspace(docker, image, container)
        ).pipe(Effect.tap(() => Effect.sync(() => kept = true)))
      ).pipe(
        Effect.mapError(explainStorageRefusal(options.storageBytes)),
        Effect.tapError(() => removeEgress(name))
      )
      // Only a sandbox with a policy has a gateway: no extra engine call on an ordinary start.
      const reached = egress === undefined ? boxOf(running) : yield* throughGateway(boxOf(running))
      const box: DockerBox = { ...reached, workspace: temporary }
      yield* Effect.forEach(
        sandbox.additionalNetworks,
        (extra) =>
          engineCall(
            `connect ${name} to network ${extra}`,
            () => docker.getNetwork(extra).connect({ Container: running.id })
          ),
        { discard: true }
      ).pipe(Effect.tapError(() => removeWithWorkspace(box.container, box.workspace)))
      return { sandbox: box, id: name }
    })
    // A failed start leaves no workspace behind, unless it is to be kept.
    return yield* started.pipe(
      Effect.tapError(() =>
        made === undefined || keepWorkspace || spec.keepAlive ? Effect.void : removeTemporaryWorkspace(made)
      ),
      withEngine
    )
  })

  /**
   * The server's URL on the host's network: the port it announced in its log (it picks a free
   * one), read until it appears (`launch` races this against the container's exit).
   */
  const announcedUrl = (box: DockerBox) =>
    engineCall("read the server log", () => box.container.logs({ stdout: true, stderr: false })).pipe(
      Effect.map((log) => /effect-sandbox-server listening \{[^}]*"port":(\d+)/.exec(log.toString("utf8"))?.[1]),
      Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (port) => port !== undefined, times: 300 }),
      Effect.flatMap((port) =>
        port === undefined
          ? Effect.fail(
            new ProviderError({
              provider: "Docker",
              operation: "read the server's port",
              reason: "timeout",
              message: `The action server in ${box.name} never announced its port.`
            })
          )
          : Effect.succeed(`http://127.0.0.1:${port}`)
      ),
      Effect.tap((url) => Effect.sync(() => box.announced = url))
    )

  /** The server's exit code and last log lines, once its container stops. */
  const serverExit = (box: DockerBox) =>
    Effect.promise(() => box.container.wait().catch(() => ({ StatusCode: -1 }))).pipe(
      Effect.flatMap((exit) => Effect.map(logTail(box.container), (output) => ({ exitCode: exit.StatusCode, output })))
    )

  /**
   * Where the client reaches a port. On a local Linux engine whose bridge this host is on
   * (engines/docker/container.ts `bridgeAddress`) the server is reached at the container's bridge
   * address, skipping docker-proxy (~1 ms a request, and it stalls early connections); users are
   * shown the port published on 127.0.0.1, as every other port is.
   */
  const endpoint = (box: DockerBox, port: number) =>
    Effect.gen(function*() {
      if (port === SERVER_PORT && box.hostNetwork) {
        // Nothing is published: the server announced a port of its choosing.
        const url = box.announced ?? (yield* announcedUrl(box))
        return { url, shown: url }
      }
      const { ip, ports } = box.reached
      const published = ports[port]
      if (published !== undefined) {
        const shown = `http://127.0.0.1:${published}`
        const bridge = port === SERVER_PORT && engine.local && ip !== ""
        return bridge ? { url: `http://${ip}:${SERVER_PORT}`, shown } : { url: shown }
      }
      return yield* new ProviderError({
        provider: "Docker",
        operation: `reach port ${port} of ${box.name}`,
        reason: "not-found",
        message: `Docker could not reach port ${port} of ${box.name}: it is not published`
      })
    })

  return {
    user: { name: options.user ?? DEFAULT_SANDBOX_USERNAME, id: uid },
    aliveTimeout: "60 seconds",
    // The engine tells when the container stops (one waiting request, no polling); `state` then says why.
    stopped: (box) => Effect.promise(() => box.container.wait().catch(() => undefined)).pipe(Effect.asVoid),
    create,
    /** The server is the container's command: follow it until it answers, or exits first. */
    launch: (box, spec) =>
      Effect.gen(function*() {
        // The server's `listening` line in the log it already follows: the /alive wait begins then.
        // A restarted container's log holds its earlier run's line: that wait then polls as before.
        const listening = yield* Deferred.make<void>()
        const heard = Deferred.succeed(listening, undefined)
        yield* forwardContainerLogs(docker, box.container, box.name, {
          line: (line) => line.startsWith(LISTENING_PREFIX) ? heard : Effect.void,
          end: heard
        })
        if (spec.sandbox.useHostNetwork) {
          yield* Effect.raceFirst(
            announcedUrl(box),
            Effect.flatMap(serverExit(box), (exit) =>
              Effect.fail(
                new RuntimeStartError({
                  message: serverExitedMessage({
                    provider: "Docker",
                    sandboxNoun: "container",
                    sandboxId: box.name,
                    ...exit
                  }),
                  reason: "server-exited",
                  ...exit
                })
              ))
          )
        }
        return { workspace: IMAGE_WORKSPACE, serverExit: serverExit(box), listening: Deferred.await(listening) }
      }),
    destroy: (box) =>
      removeWithWorkspace(box.container, box.workspace).pipe(Effect.andThen(removeEgress(box.name)), withEngine),
    find: Effect.fn("DockerRuntime.find")(function*(tags) {
      const listed = yield* engineCall(
        "list containers",
        () =>
          docker.listContainers({
            all: true,
            filters: { label: Object.entries(tags).map(([key, value]) => `${key}=${value}`) }
          })
      )
      const found: Array<Found<DockerBox>> = []
      for (const summary of listed) {
        const labels = summary.Labels
        const name = summary.Names[0]?.replace(/^\//, "") ?? ""
        // Ours by the name `create` gives (no image can set it), not a runtime API server's.
        if (name !== `${prefix}-${labelOf(labels, LABEL.session)}` || labelOf(labels, LABEL.runtimeApi) !== undefined) {
          continue
        }
        const inspected = yield* inspectRunning(docker.getContainer(summary.Id), name).pipe(
          Effect.catchIf((error) => error.reason === "not-found", () => Effect.succeed(undefined))
        )
        // Removed since it was listed.
        if (inspected === undefined) continue
        const key = sessionKeyOf(labels, inspected.env)
        const ours = Object.fromEntries(Object.entries(labels).filter(([, value]) => value !== ""))
        found.push({
          sandbox: {
            ...(yield* withEngine(throughGateway(boxOf(inspected)))),
            workspace: temporaryWorkspaceOf(name, labels)
          },
          id: name,
          tags: key === "" ? ours : { ...ours, [LABEL.sessionKey]: key },
          state: stateOf(summary.State)
        })
      }
      return found
    }),
    state: (box) =>
      engineCall(`inspect ${box.name}`, () => box.container.inspect()).pipe(
        Effect.map((info): SandboxState =>
          info.State.OOMKilled
            ? {
              _tag: "gone",
              outOfMemory: true,
              why: `the container was killed for exceeding its memory limit (${info.HostConfig.Memory} bytes)`
            }
            : info.State.Paused
            ? { _tag: "paused" }
            : info.State.Running
            ? { _tag: "running" }
            : { _tag: "stopped", why: `the container exited with code ${info.State.ExitCode}` }
        ),
        Effect.catchIf(
          (error) => error.reason === "not-found",
          () => Effect.succeed<SandboxState>({ _tag: "gone", why: "the container is gone" })
        )
      ),
    endpoint,
    /**
     * A stopped container started again; one made before the key's digest was used gets its key
     * file copied in first (its user's, who may differ from this layer's).
     */
    start: (box) =>
      Effect.gen(function*() {
        const info = yield* engineCall(`inspect ${box.name}`, () => box.container.inspect())
        const env = info.Config.Env ?? []
        if (readsKeyFile(env)) {
          yield* putSessionKey(box.container, sessionKeyOf(box.labels, env), containerUid(info.Config.User, uid))
        }
        if ((yield* gatewayPorts(box.name)) !== undefined) yield* startGateway(box.name)
        yield* engineCall(`start ${box.name}`, () => box.container.start())
        box.reached = (yield* throughGateway(boxOf(yield* inspectRunning(box.container, box.name)))).reached
      }).pipe(withEngine),
    pause: {
      keepsMemory: true,
      pause: (box) => pauseContainer(box.container, box.name),
      resume: (box) => engineCall(`unpause ${box.name}`, () => box.container.unpause()).pipe(Effect.asVoid)
    },
    snapshot: dockerSnapshots(docker, prefix, lease.dir),
    reaper: { every: "30 seconds", pass: withEngine(reapPass) }
  } satisfies Driver<DockerBox>
})

export const dockerDriver: DriverDefinition<DockerRuntimeOptions, DockerBox> = {
  provider: "Docker",
  kind: "docker",
  sandboxNoun: "container",
  hostWorkspace: true,
  // Every rule: the gateway's proxy takes names, domains, addresses and blocks (engines/docker/egress.ts).
  network: () => Effect.void,
  edgeSecrets: () => Effect.void,
  classify: classifyDocker,
  connect
}
