/**
 * DockerRuntime's options are checked before the engine is reached: each bad one fails the layer
 * with a one-line `InvalidOptionsError` naming the option and the rule, not the engine's own 400
 * half-way through a start, nor (`cpus: 0`, `memoryBytes: 0`) a container without the limit.
 * The engine here is an address nothing answers: the control case shows that good options reach
 * it first thing, so a bad option's InvalidOptionsError proves nothing was built, made or created.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type Duration, Effect, Layer } from "effect"
import { DockerRuntime, type DockerRuntimeOptions } from "../../src/docker.ts"

const NOWHERE = `unix:///nonexistent/effect-sandbox-${process.pid}.sock`
let previousHost: string | undefined

beforeAll(() => {
  previousHost = process.env["DOCKER_HOST"]
  process.env["DOCKER_HOST"] = NOWHERE
})
afterAll(() => {
  if (previousHost === undefined) delete process.env["DOCKER_HOST"]
  else process.env["DOCKER_HOST"] = previousHost
})

const startError = <A>(layer: Layer.Layer<A, { readonly _tag: string; readonly message: string }>) =>
  Effect.flip(Effect.scoped(Layer.build(layer))).pipe(Effect.map((error) => `${error._tag}: ${error.message}`))

const refused = (rule: string) => `InvalidOptionsError: Invalid DockerRuntime options: ${rule}`

const cases: ReadonlyArray<readonly [string, DockerRuntimeOptions, string]> = [
  [
    "cpus 0 (Docker's 'no limit')",
    { cpus: 0 },
    "cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"
  ],
  ["negative cpus", { cpus: -2 }, "cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"],
  [
    "cpus not a number",
    { cpus: Number.NaN },
    "cpus: Expected a finite number; cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"
  ],
  [
    "memoryBytes below Docker's 6 MiB",
    { memoryBytes: 1024 },
    "memoryBytes: Expected at least 6291456 (6 MiB, Docker's smallest limit)"
  ],
  [
    "memoryBytes 0 (Docker's 'no limit')",
    { memoryBytes: 0 },
    "memoryBytes: Expected at least 6291456 (6 MiB, Docker's smallest limit)"
  ],
  ["fractional memoryBytes", { memoryBytes: 8 * 1024 ** 2 + 0.5 }, "memoryBytes: Expected an integer"],
  ["storageBytes 0", { storageBytes: 0 }, "storageBytes: Expected a value greater than 0"],
  ["pidsLimit 0", { pidsLimit: 0 }, "pidsLimit: Expected a value greater than 0"],
  [
    "appPorts out of range",
    { appPorts: [0, 3000, 65536] },
    "appPorts.0: Expected a value between 1 and 65535; appPorts.2: Expected a value between 1 and 65535"
  ],
  ["a duplicated app port", { appPorts: [3000, 5173, 3000] }, "appPorts: Expected an array with unique items"],
  [
    "the server's port as an app port",
    { appPorts: [8000] },
    "appPorts: 8000 is the action server's own port in the container"
  ],
  [
    "VS Code's port as an app port",
    { vscode: true, appPorts: [8001] },
    "appPorts: 8001 is VS Code's own port in the container"
  ],
  ["a negative userId", { userId: -1 }, "userId: Expected a value greater than or equal to 0"],
  [
    "a username useradd refuses",
    { username: "dev; rm -rf /" },
    "username: Expected a user name useradd takes (a-z, 0-9, _ and -, at most 32, not starting with a digit or -)"
  ],
  [
    "a container name prefix Docker refuses",
    { containerNamePrefix: "-sandbox" },
    "containerNamePrefix: Expected a container name's start (a letter or digit, then letters, digits, _ . -)"
  ],
  [
    "a session id that cannot name a container",
    { sessionId: "a/b" },
    "sessionId: Expected letters, digits, _ . - (it names the container)"
  ],
  [
    "an ownerLease term that is no duration",
    { ownerLease: { reapEvery: "soon" as Duration.Input } },
    "ownerLease.reapEvery: not a duration"
  ],
  [
    "a lease renewed no sooner than it goes stale",
    { ownerLease: { renewEvery: "30 seconds", staleAfter: "20 seconds" } },
    "ownerLease.renewEvery: must be shorter than staleAfter"
  ],
  ["an empty baseImage", { baseImage: "" }, "baseImage: Expected a value with a length of at least 1"]
]

describe("DockerRuntime options", () => {
  for (const [what, options, rule] of cases) {
    it.effect(`${what} fails before the engine is reached`, () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* startError(DockerRuntime.layer(options)), refused(rule))
      }))
  }

  it.effect("layerPool checks them too, once, before any warm start", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(DockerRuntime.layerPool({ warmContainers: 2, cpus: 0 })),
        refused("cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)")
      )
    }))

  // The control: good options (VS Code's port is an app's like any other without the plugin) go
  // on to the engine, which is the first thing a start touches.
  it.effect("a pool of no containers is refused (its layerWarm would wait forever)", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(DockerRuntime.layerPool({ warmContainers: 0 })),
        refused("warmContainers: Expected a value greater than or equal to 1")
      )
    }))

  it.effect("good options reach the engine first", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(DockerRuntime.layer({ cpus: 0.5, memoryBytes: 512 * 1024 ** 2, appPorts: [3000, 8001] })),
        `RuntimeStartError: Cannot reach the Docker engine at ${NOWHERE}. Start dockerd (or Docker Desktop), or point DOCKER_HOST at a running engine.`
      )
    }))
})
