/**
 * DockerRuntime's options are checked before the engine is reached: each bad one fails the layer
 * with a one-line `InvalidOptionsError` naming the option and the rule, not the engine's own 400
 * half-way through a start, nor (`cpus: 0`, `memoryMiB: 0`) a container without the limit.
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

const refused = (rule: string) =>
  `InvalidOptionsError: ${rule.startsWith("DockerRuntime options:") ? rule : `Invalid DockerRuntime options: ${rule}`}`
/** The shared check (src/hosted/options.ts), before Docker's own. */
const SHARED_RESOURCES = "DockerRuntime options: cpus and memoryMiB must be positive."

const cases: ReadonlyArray<readonly [string, DockerRuntimeOptions, string]> = [
  ["cpus 0 (Docker's 'no limit')", { cpus: 0 }, SHARED_RESOURCES],
  ["negative cpus", { cpus: -2 }, SHARED_RESOURCES],
  ["cpus not a number", { cpus: Number.NaN }, SHARED_RESOURCES],
  [
    "cpus below Docker's smallest share",
    { cpus: 0.001 },
    "cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)"
  ],
  [
    "memoryMiB below Docker's 6 MiB",
    { memoryMiB: 1 },
    "memoryMiB: Expected at least 6 (Docker's smallest limit)"
  ],
  ["memoryMiB 0 (Docker's 'no limit')", { memoryMiB: 0 }, SHARED_RESOURCES],
  [
    "fractional memoryMiB",
    { memoryMiB: 8.5 },
    "memoryMiB: Expected an integer"
  ],
  ["storageBytes 0", { storageBytes: 0 }, "storageBytes: Expected a value greater than 0"],
  ["pidsLimit 0", { pidsLimit: 0 }, "pidsLimit: Expected a value greater than 0"],
  [
    "appPorts out of range",
    { appPorts: [0, 3000, 65536] },
    "DockerRuntime options: appPorts: 0 is not a port."
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
  ["a negative userId", { userId: -1 }, "DockerRuntime options: userId must be a whole number, 0 or more."],
  [
    "a username useradd refuses",
    { user: "dev; rm -rf /" },
    "user: Expected a user name useradd takes (a-z, 0-9, _ and -, at most 32, not starting with a digit or -)"
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
    { ownerLease: { staleAfter: "soon" as Duration.Input } },
    "ownerLease.staleAfter: not a duration"
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
        yield* startError(DockerRuntime.layerPool({ poolSize: 2, cpus: 0.001 })),
        refused("cpus: Expected at least 0.01 (Docker's smallest share; 0 would be no limit)")
      )
    }))

  // The control: good options (VS Code's port is an app's like any other without the plugin) go
  // on to the engine, which is the first thing a start touches.
  it.effect("a pool of no containers is refused (its layerWarm would wait forever)", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(DockerRuntime.layerPool({ poolSize: 0 })),
        refused("DockerRuntime options: poolSize must be 1 or more.")
      )
    }))

  it.effect("good options reach the engine first", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(DockerRuntime.layer({ cpus: 0.5, memoryMiB: 512, appPorts: [3000, 8001] })),
        `RuntimeStartError: Cannot reach the Docker engine at ${NOWHERE}. Start dockerd (or Docker Desktop), or point DOCKER_HOST at a running engine.`
      )
    }))
})
