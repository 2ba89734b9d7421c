/**
 * A DockerRuntime's start as its `StartProgress` listener sees it, on the real engine: a base image
 * the engine lacks is pulled (from a registry stand-in on 127.0.0.1, since this machine reaches no
 * registry), its bytes counted to the end; the runtime image is built step 1 to n; the container
 * is created, its server started and waited for; then ready, in that order, the time since the
 * start growing. A base image that cannot be pulled (no registry answers; the real failure here)
 * is a start error naming the options that choose another and the engine's images.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { type Runtime, RuntimeStartError } from "../../src/index.ts"
import { type StartPhase, StartProgress, type StartProgressEvent } from "../../src/services/StartProgress.ts"
import {
  assertNoContainer,
  buildRuntime,
  dockerCli,
  dockerLayer,
  removeLeftovers,
  sessionId,
  sh,
  startError
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"
import { registryServing } from "./registry.ts"

/** The layer with a listener collecting its start's events. */
const listened = <E>(layer: Layer.Layer<Runtime, E>) => {
  const events: Array<StartProgressEvent> = []
  return {
    events,
    layer: layer.pipe(Layer.provide(StartProgress.layer((event) => Effect.sync(() => void events.push(event)))))
  }
}

/** The phases of `events`, a run of one phase as one. */
const phases = (events: ReadonlyArray<StartProgressEvent>): Array<StartPhase> =>
  events.map((event) => event.phase).filter((phase, i, all) => i === 0 || all[i - 1] !== phase)

describeDocker("DockerRuntime start progress", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("progress"))

  it.live(
    "pulls a base image the engine lacks and builds on it, reporting each phase in order with its detail",
    () =>
      Effect.gen(function*() {
        const registry = yield* registryServing(image)
        assert.notStrictEqual(dockerCli("image", "inspect", registry.reference).status, 0, "pulled already")
        const session = sessionId("progress")
        // A base new to the engine (its random layer): pulled, and the runtime image built on it.
        const { events, layer } = listened(dockerLayer(registry.reference, { sessionId: session }))
        const { release, rt } = yield* buildRuntime(layer)
        assert.strictEqual((yield* sh(rt, "echo started")).content, "started")
        yield* release
        assertNoContainer(session)
        // The engine has it now, under the name it was pulled by.
        assert.strictEqual(dockerCli("image", "inspect", registry.reference).status, 0)

        assert.deepStrictEqual(phases(events), [
          "creating",
          "pulling-image",
          "building-image",
          "creating",
          "starting-server",
          "waiting-for-server",
          "ready"
        ])
        const pulls = events.filter((event) => event.phase === "pulling-image")
        assert.isTrue(pulls.every((event) => event.detail === registry.reference))
        const last = pulls.at(-1)?.bytes
        assert.strictEqual(last?.done, last?.total)
        assert.include(registry.bytes, last?.total)
        // The bytes only grow.
        const done = pulls.map((event) => event.bytes?.done ?? -1)
        assert.deepStrictEqual(done, [...done].sort((a, b) => a - b))
        // The build: its context sent first, then each step once, 1 to n of n.
        const builds = events.filter((event) => event.phase === "building-image")
        assert.match(builds[0]!.detail, /^effect-sandbox-runtime:[0-9a-f]{16}: sending the build context$/)
        const steps = builds.slice(1).map((event) => event.step)
        const total = steps[0]!.total
        assert.deepStrictEqual(steps, Array.from({ length: total }, (_, i) => ({ index: i + 1, total })))
        assert.match(builds[1]!.detail, /^FROM sha256:[0-9a-f]{64}$/)
        assert.strictEqual(events.find((event) => event.phase === "ready")?.detail, `docker sandbox ${session}`)
        assert.include(
          events.filter((event) => event.phase === "creating").map((event) => event.detail),
          `container effect-sandbox-${session}`
        )
        // Each stamped with its phase's status and the time since the start began, growing.
        const statusOf: Record<StartPhase, string> = {
          "pulling-image": "BUILDING_RUNTIME",
          "building-image": "BUILDING_RUNTIME",
          creating: "STARTING_RUNTIME",
          "starting-server": "STARTING_RUNTIME",
          "waiting-for-server": "RUNTIME_STARTED",
          ready: "READY"
        }
        for (const event of events) assert.strictEqual(event.status, statusOf[event.phase], event.phase)
        const elapsed = events.map((event) => Duration.toMillis(event.elapsed))
        assert.deepStrictEqual(elapsed, [...elapsed].sort((a, b) => a - b))
      }).pipe(Effect.scoped),
    300_000
  )

  it.live(
    "a base image that cannot be pulled is a start error naming --image, baseImage and the engine's images",
    () =>
      Effect.gen(function*() {
        const missing = `effect-sandbox-test/no-such-base:${process.pid}`
        const session = sessionId("progress")
        const { events, layer } = listened(dockerLayer(missing, { sessionId: session }))
        const error = yield* startError(layer)
        assert.instanceOf(error, RuntimeStartError)
        assertNoContainer(session)
        const { message } = error as RuntimeStartError
        // As data: the engine has no such image (its 404), and the pull was tried.
        assert.strictEqual((error as RuntimeStartError).provider?.reason, "image-missing")
        assert.strictEqual((error as RuntimeStartError).provider?.status, 404)
        assert.deepStrictEqual(phases(events), ["creating", "pulling-image"])
        assert.isTrue(
          message.startsWith(
            `The base image ${missing} is not on this engine and could not be pulled (Docker could not pull ${missing}: `
          ),
          message
        )
        assert.include(
          message,
          "). Choose another with --image (the CLI), baseImage (the runtime's options) or " +
            "SANDBOX_BASE_CONTAINER_IMAGE; any glibc image with bash will do. This engine has: "
        )
        assert.notInclude(message, "\n")
        // The images it names are the engine's (a runtime image built from one is not named).
        const named = /This engine has: (.*?)( \(and \d+ more\))?\.$/.exec(message)?.[1]?.split(", ") ?? []
        assert.isAbove(named.length, 0, message)
        for (const tag of named) {
          assert.notMatch(tag, /^effect-sandbox-runtime:/)
          assert.strictEqual(dockerCli("image", "inspect", tag).status, 0, `${tag} is not on the engine`)
        }
      }),
    120_000
  )
})
