/**
 * The Docker engine, through dockerode: `DOCKER_HOST` or the default socket.
 * Building the layer pings the engine, so a missing daemon is one clear error
 * instead of a failure deep inside the first container operation.
 *
 * dockerode is an optional peer dependency, imported when the layer is built (not when
 * `effect-sandbox/docker` is imported): a missing one is a `RuntimeStartError` saying what to install.
 */
import { Context, Effect, Layer } from "effect"
import { ProviderError, RuntimeStartError } from "../../schema/errors.ts"
import { classifyDocker } from "./classify.ts"

/**
 * The dockerode client as the public types name it: structural, so that the declarations of
 * `effect-sandbox/docker` resolve without `@types/dockerode`, which consumers need not have.
 * Any `new Docker(...)` from dockerode is one; the package's own calls get it typed from
 * `dockerClient` (client.ts).
 */
export interface DockerClient {
  ping(): Promise<unknown>
}

export class DockerEngine extends Context.Service<DockerEngine, {
  /** A dockerode `Docker` instance. */
  readonly docker: DockerClient
  /** Human-readable address, for messages. */
  readonly address: string
  /** A Linux engine on this machine: containers' bridge addresses are reachable from here. */
  readonly local: boolean
}>()("effect-sandbox/DockerEngine") {
  static readonly layer: Layer.Layer<DockerEngine, RuntimeStartError> = Layer.effect(
    DockerEngine,
    Effect.suspend(() => connectEngine)
  )
}

/** The engine of `DOCKER_HOST` (or the default socket), loaded and pinged: a missing one is a start error. */
export const connectEngine: Effect.Effect<DockerEngine["Service"], RuntimeStartError> = Effect.gen(function*() {
  const { default: Docker } = yield* Effect.tryPromise({
    try: () => import("dockerode"),
    catch: (cause) =>
      new RuntimeStartError({
        message: (cause as { code?: string }).code === "ERR_MODULE_NOT_FOUND"
          ? "DockerRuntime needs dockerode, an optional peer dependency: npm install dockerode"
          : `Cannot load dockerode: ${(cause as Error).message}`
      })
  })
  const docker = new Docker()
  const address = process.env["DOCKER_HOST"] ?? "unix:///var/run/docker.sock"
  yield* engineCall(`reach the Docker engine at ${address}`, () => docker.ping()).pipe(
    Effect.mapError(() =>
      new RuntimeStartError({
        message:
          `Cannot reach the Docker engine at ${address}. Start dockerd (or Docker Desktop), or point DOCKER_HOST at a running engine.`
      })
    )
  )
  const local = process.platform === "linux" && address.startsWith("unix://")
  return { docker, address, local }
})

/**
 * A dockerode call as an Effect: a failure is a `ProviderError` naming what was attempted, its
 * reason and the engine's status (classify.ts), "Docker could not <what>: <the engine's text>".
 */
export const engineCall = <A>(what: string, call: () => Promise<A>): Effect.Effect<A, ProviderError> =>
  Effect.tryPromise({ try: call, catch: (cause) => engineRefusal(what, cause) })

/** The engine's refusal of `what` (a call's rejection, or an error its progress stream reported), classified. */
export const engineRefusal = (what: string, cause: unknown): ProviderError => {
  const { reason, status, text } = classifyDocker(cause)
  return new ProviderError({
    provider: "Docker",
    operation: what,
    reason,
    ...(status === undefined ? {} : { status }),
    message: `Docker could not ${what}: ${text}`
  })
}
