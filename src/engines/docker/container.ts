/**
 * One sandbox container on the engine: created from a spec, started, its published ports read
 * back, paused, and stopped and removed when its scope closes (unless kept alive). The server inside listens on a fixed container port; the host
 * side is engine-assigned on 127.0.0.1 (never probe-then-bind).
 */
import type Docker from "dockerode"
import { Effect, Schedule } from "effect"
import { networkInterfaces } from "node:os"
import type { ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { statusOf } from "./classify.ts"
import { dockerClient } from "./client.ts"
import { engineCall } from "./engine.ts"

/** The action server's port inside every container. */
export const SERVER_PORT = 8000

export interface RunningContainer {
  readonly container: Docker.Container
  readonly id: string
  readonly name: string
  /** Host ports by container port, all on 127.0.0.1. */
  readonly ports: Readonly<Record<number, number>>
  /**
   * The container's address on its first network, when this host is on that network (`bridgeAddress`);
   * empty otherwise, and with host networking.
   */
  readonly ip: string
  readonly labels: Readonly<Record<string, string>>
  /** `NAME=value` entries, as the engine reports them. */
  readonly env: ReadonlyArray<string>
  /** On the host's network: nothing is published, the server listens on a port of its choosing. */
  readonly hostNetwork: boolean
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

/**
 * A container's address on `network`, if this host is on that network: its gateway is one of the
 * host's own addresses (`interfaces`: this machine's), so the host routes to it directly. Not
 * through Docker Desktop's VM, a rootless engine's namespace or a remote engine, where the address
 * is unreachable from here and the client must use the published port.
 */
export const bridgeAddress = (
  network: { readonly IPAddress?: string; readonly Gateway?: string } | undefined,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()
): string => {
  const { Gateway: gateway, IPAddress: address } = network ?? {}
  if (gateway === undefined || gateway === "" || address === undefined) return ""
  const onHost = Object.values(interfaces).some((addresses) => addresses?.some((a) => a.address === gateway))
  return onHost ? address : ""
}

export const inspectRunning = (container: Docker.Container, name: string) =>
  engineCall(`inspect ${name}`, () => container.inspect()).pipe(
    Effect.map((info): RunningContainer => ({
      container,
      id: info.Id,
      name,
      ports: publishedPorts(info),
      ip: bridgeAddress(Object.values(info.NetworkSettings.Networks ?? {})[0]),
      labels: info.Config.Labels ?? {},
      env: info.Config.Env ?? [],
      hostNetwork: info.HostConfig.NetworkMode === "host"
    }))
  )

/** Stop (no grace: the server needs none) and remove, ignoring a container already gone. */
export const removeContainer = (container: Docker.Container) =>
  Effect.promise(() => container.remove({ force: true, v: true }).catch((e) => statusOf(e) === 404 ? undefined : e))

/**
 * What must be done to a created or stopped container before each start (e.g. copy a file in), given
 * its labels and its `User` as created (the create options', or the inspect's already at hand).
 */
export type BeforeStart = (
  container: Docker.Container,
  labels: Readonly<Record<string, string>>,
  user: string | undefined
) => Effect.Effect<void, ProviderError | RuntimeStartError>

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
