/**
 * Many runtimes at once: 20 DockerRuntimes started concurrently each answer in
 * their own container, and releasing them leaves no container behind.
 */
import { afterAll, assert, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  assertNoContainer,
  buildRuntime,
  dockerLayer,
  removeLeftovers,
  sessionContainers,
  sessionId,
  sh
} from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

const COUNT = 20

describeDocker("DockerRuntime concurrency", () => {
  const image = baseImage()
  afterAll(() => removeLeftovers("many"))

  it.live(
    `${COUNT} runtimes start concurrently, each answers with its own session, and all are removed`,
    () =>
      Effect.gen(function*() {
        const sessions = Array.from({ length: COUNT }, () => sessionId("many"))
        const runtimes = yield* Effect.all(
          sessions.map((session) => buildRuntime(dockerLayer(image, { sessionId: session }))),
          { concurrency: "unbounded" }
        )
        // Each container exists once, with its own server port.
        for (const session of sessions) assert.lengthOf(sessionContainers(session), 1)
        const servers = new Set(runtimes.map(({ rt }) => rt.info.urls["actionServer"]))
        assert.strictEqual(servers.size, COUNT)

        const answers = yield* Effect.all(
          runtimes.map(({ rt }) => sh(rt, "echo \"$RUNTIME_ID\"")),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(answers.map((obs) => obs.content), sessions)
        assert.deepStrictEqual(runtimes.map(({ rt }) => rt.info.id), sessions)

        yield* Effect.all(runtimes.map(({ release }) => release), { concurrency: "unbounded" })
        for (const session of sessions) assertNoContainer(session)
      }),
    120_000
  )
})
