/**
 * One sandbox container: created from a spec, started, its published port read
 * back from the engine, and stopped and removed when its scope closes (unless
 * kept alive). The server inside listens on a fixed container port; the host
 * side is engine-assigned on 127.0.0.1 (never probe-then-bind).
 */
import type Docker from "dockerode"
import { Effect, Schedule } from "effect"
import { hostname } from "node:os"
import { RuntimeStartError } from "../../schema/errors.ts"
import { dockerClient } from "./client.ts"
import { type DockerEngine, engineCall, statusOf } from "./engine.ts"
import { LABEL, labelOf, type Labels } from "./labels.ts"
import { claimOf } from "./leaseRecords.ts"
import { removeTemporaryWorkspace } from "./workspaceRemoval.ts"

/** The action server's port inside every container. */
export const SERVER_PORT = 8000

export interface RunningContainer {
  readonly container: Docker.Container
  readonly id: string
  readonly name: string
  /** Host ports by container port, all on 127.0.0.1. */
  readonly ports: Readonly<Record<number, number>>
  /** The container's address on its first network (empty with host networking). */
  readonly ip: string
  readonly labels: Readonly<Record<string, string>>
  /** `NAME=value` entries, as the engine reports them. */
  readonly env: ReadonlyArray<string>
}

/**
 * Freeze a container. runc gives up freezing a cgroup whose processes keep forking ("unable to
 * freeze") and leaves it running, as seen under load; a later attempt usually freezes it.
 */
export const pauseContainer = (container: Docker.Container, name: string) =>
  engineCall(`pause ${name}`, () => container.pause()).pipe(
    Effect.retry({
      schedule: Schedule.spaced("500 millis"),
      times: 4,
      while: (error) => error.message.includes("unable to freeze")
    }),
    Effect.asVoid
  )

/** Published host ports (127.0.0.1) of a running container, by container port. */
export const publishedPorts = (info: Docker.ContainerInspectInfo): Record<number, number> => {
  const ports: Record<number, number> = {}
  for (const [key, bindings] of Object.entries(info.NetworkSettings.Ports ?? {})) {
    const hostPort = bindings?.find((b) => b.HostIp === "127.0.0.1")?.HostPort
    if (hostPort !== undefined) ports[Number.parseInt(key, 10)] = Number(hostPort)
  }
  return ports
}

const inspectRunning = (container: Docker.Container, name: string) =>
  engineCall(`inspect ${name}`, () => container.inspect()).pipe(
    Effect.map((info): RunningContainer => ({
      container,
      id: info.Id,
      name,
      ports: publishedPorts(info),
      ip: Object.values(info.NetworkSettings.Networks ?? {})[0]?.IPAddress ?? "",
      labels: info.Config.Labels ?? {},
      env: info.Config.Env ?? []
    }))
  )

/** Stop (no grace: the server needs none) and remove, ignoring a container already gone. */
export const removeContainer = (container: Docker.Container) =>
  Effect.promise(() => container.remove({ force: true, v: true }).catch((e) => statusOf(e) === 404 ? undefined : e))

/**
 * The temporary workspace the container `name`'s labels name, when it is ours to remove with the
 * container: one its owner recorded in a lease directory of our own user (leaseRecords.ts), or,
 * for a kept-alive container, which has no lease, one made on this host.
 */
export const temporaryWorkspaceOf = (name: string, labels: Labels): string | undefined =>
  labelOf(labels, LABEL.ownerLease) !== undefined
    ? claimOf(name, labels)?.workspace
    : labelOf(labels, LABEL.ownerHost) === hostname()
    ? labelOf(labels, LABEL.temporaryWorkspace)
    : undefined

/**
 * Remove a container created earlier (by this or a dead process) and then its temporary
 * workspace, if it has one and the removal's checks let it (workspaceRemoval.ts).
 */
export const removeWithWorkspace = (container: Docker.Container, workspace: string | undefined) =>
  removeContainer(container).pipe(
    Effect.andThen(workspace === undefined ? Effect.void : removeTemporaryWorkspace(workspace))
  )

/**
 * What must be done to a created or stopped container before each start (e.g. copy a file in), given
 * its labels and its `User` as created (the create options', or the inspect's already at hand).
 */
export type BeforeStart = (
  container: Docker.Container,
  labels: Readonly<Record<string, string>>,
  user: string | undefined
) => Effect.Effect<void, RuntimeStartError>

/** Create and start a container; closing the scope removes it unless `keep` says otherwise at that time. */
export const startContainer = (options: Docker.ContainerCreateOptions, keep: () => boolean, beforeStart: BeforeStart) =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const name = options.name!
    const container = yield* Effect.acquireRelease(
      engineCall(`create container ${name}`, () => docker.createContainer(options)),
      (c) => keep() ? Effect.void : removeContainer(c)
    )
    yield* beforeStart(container, options.Labels ?? {}, options.User)
    yield* engineCall(`start container ${name}`, () => container.start())
    return yield* inspectRunning(container, name)
  })

/**
 * The engine's refusal of a disk quota, said plainly: which option, and what the
 * engine needs to enforce it. The refused create left no container behind.
 */
export const explainStorageRefusal = (storageBytes: number | undefined) => (error: RuntimeStartError) =>
  storageBytes !== undefined && /storage-?opt/i.test(error.message)
    ? new RuntimeStartError({
      message: `DockerRuntime's storageBytes (${storageBytes}) needs an engine that enforces container disk quotas ` +
        `(overlay2 on xfs mounted with 'pquota', or btrfs, zfs, devicemapper); this engine refused it. ` +
        `Leave storageBytes unset on this engine. ${error.message}`
    })
    : error

/** An existing container by name, started if it stopped; `null` when there is none. */
export const findContainer = (
  name: string,
  beforeStart: BeforeStart
): Effect.Effect<RunningContainer | null, RuntimeStartError, DockerEngine> =>
  Effect.gen(function*() {
    const docker = yield* dockerClient
    const container = docker.getContainer(name)
    const info = yield* Effect.promise(() => container.inspect().catch(() => null))
    if (info === null) return null
    if (info.State.Paused) yield* engineCall(`unpause ${name}`, () => container.unpause())
    else if (!info.State.Running) {
      yield* beforeStart(container, info.Config.Labels ?? {}, info.Config.User)
      yield* engineCall(`start ${name}`, () => container.start())
    }
    return yield* inspectRunning(container, name)
  })
