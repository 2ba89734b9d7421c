/**
 * Shared helpers of the Docker tests: runtimes built in their own scope (so a
 * test releases them when it chooses), unique session ids, engine inspection,
 * and the end-of-test check that a session left no container behind.
 */
import { assert } from "@effect/vitest"
import Docker from "dockerode"
import { Context, Effect, Exit, Layer, Logger, References, Schedule, Scope } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { DockerRuntime, type DockerRuntimeOptions } from "../../src/docker.ts"
import {
  CmdOutputObservation,
  type ErrorObservation,
  Runtime,
  type RuntimeShape,
  RuntimeStartError
} from "../../src/index.ts"
import { containersWithLabel } from "./infra.ts"

export const docker = new Docker()

/** Every session id of these tests starts with this, so a failed run can be cleaned up by name. */
export const TEST_PREFIX = "dt"

/** A session id unique to one test: `dt-<file>-<random>`. */
export const sessionId = (file: string) => `${TEST_PREFIX}-${file}-${randomBytes(5).toString("hex")}`

/** The default container name of a session. */
export const containerName = (session: string) => `effect-sandbox-${session}`

/**
 * Build `layer` in its own scope; `release` closes it. The test's scope closes it
 * too (a no-op once released), so a failed assertion does not leak the runtime.
 */
export const buildRuntime = (layer: Layer.Layer<Runtime, unknown>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(layer, scope)
    return { rt: Context.get(context, Runtime), release: Scope.close(scope, Exit.void) }
  })

/** A DockerRuntime layer on `baseImage` (always fresh: each call is its own container). */
export const dockerLayer = (baseImage: string, options: DockerRuntimeOptions) =>
  Layer.fresh(DockerRuntime.layer({ baseImage, ...options }))

/** Build a DockerRuntime and collect the log lines written while it starts. */
export const buildLogged = (layer: Layer.Layer<Runtime, unknown>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = Logger.make((options) => void lines.push(String(options.message)))
    const built = yield* buildRuntime(layer).pipe(
      Effect.provideService(References.CurrentLoggers, new Set([capture])),
      Effect.provideService(References.MinimumLogLevel, "Info")
    )
    return { ...built, lines }
  })

/** The error a runtime layer failed to start with (a started one is released, and the test fails). */
export const startError = (layer: Layer.Layer<Runtime, unknown>) =>
  buildLogged(layer).pipe(
    Effect.flatMap(({ release }) => release),
    Effect.flip
  )

/**
 * Start a runtime of a fresh session (`dt-<file>-...`) that must fail: the
 * message of its RuntimeStartError, once no container of the session remains.
 */
export const refusedStart = (file: string, layer: (session: string) => Layer.Layer<Runtime, unknown>) =>
  Effect.gen(function*() {
    const session = sessionId(file)
    const error = yield* startError(layer(session))
    assert.instanceOf(error, RuntimeStartError)
    assertNoContainer(session)
    return (error as RuntimeStartError).message
  })

/** Run a command; its output (a failed command is not an error here: check `exitCode`). */
export const sh = (rt: RuntimeShape, command: string) => rt.runCommand(command).pipe(Effect.map((obs) => asCmd(obs)))

export const asCmd = (obs: CmdOutputObservation | ErrorObservation): CmdOutputObservation => {
  if (!(obs instanceof CmdOutputObservation)) {
    throw new Error(`expected a command output, got ${obs._tag}: ${obs.content}`)
  }
  return obs
}

/** `docker inspect` of a container by name or id (null when it does not exist). */
export const inspect = (nameOrId: string) =>
  Effect.promise(() => docker.getContainer(nameOrId).inspect().catch(() => null))

/** The host directory a session's container has bound at /workspace. */
export const hostWorkspace = (session: string) =>
  inspect(containerName(session)).pipe(
    Effect.map((info) => info!.Mounts.find((m) => m.Destination === "/workspace")!.Source)
  )

/** The `docker` CLI, synchronously. */
export const dockerCli = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" })

/** Containers (running or not) labelled with this session. */
export const sessionContainers = (session: string) => containersWithLabel(`effect-sandbox.session=${session}`)

/** The end of every test: no container of `session` remains. */
export const assertNoContainer = (session: string) =>
  assert.deepStrictEqual(sessionContainers(session), [], `containers of session ${session} remain`)

/** Remove what a failed test may have left: every container whose session starts with `dt-<file>-`. */
export const removeLeftovers = (file: string) => {
  const ids = dockerCli("ps", "-aq", "--filter", `name=effect-sandbox-${TEST_PREFIX}-${file}-`).stdout.split("\n")
    .filter((id) => id !== "")
  if (ids.length > 0) dockerCli("rm", "-f", "-v", ...ids)
}

/** GET `url` from the host, retrying while the published port is not answering yet (docker-proxy resets). */
export const httpGet = (url: string) =>
  Effect.tryPromise(() =>
    fetch(url, { signal: AbortSignal.timeout(2_000) }).then(async (r) => ({ status: r.status, body: await r.text() }))
  ).pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 50 }))
