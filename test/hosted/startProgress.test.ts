/**
 * A hosted runtime's start as its `StartProgress` listener sees it, over an in-memory driver whose
 * "server" is a loopback HTTP server answering `/alive`: the sandbox created, its server started,
 * waited for, ready, in that order, each with its detail, its phase's status and the time since the
 * start began; a sandbox attached to (it exists) is not created again. Nothing is reported to a
 * layer without a listener, and a warm pool's starts, which no one waits for, report nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { hostedRuntime } from "../../src/hosted/hostedRuntime.ts"
import type { ProvisionedPool } from "../../src/provisioned/provisioned.ts"
import type { Driver, DriverDefinition } from "../../src/services/Driver.ts"
import { Runtime } from "../../src/services/Runtime.ts"
import { StartProgress, type StartProgressEvent } from "../../src/services/StartProgress.ts"

class FakePool extends Context.Service<FakePool, ProvisionedPool>()("test/FakePool") {}

/** A loopback server that answers `/alive` (and 404 to the rest), in the scope. */
const aliveServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const server = createServer((request, response) =>
      void response.writeHead(request.url === "/alive" ? 200 : 404, { "Content-Type": "application/json" }).end(
        "{}"
      )
    )
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return server
  }),
  (server) =>
    Effect.promise(() =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    )
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

/** A provider keeping its sandboxes in memory, each "running" the server at `url`. */
const inMemory = (url: string): DriverDefinition<{ readonly sessionId?: string }, { readonly id: string }> => {
  const tags = new Map<string, Record<string, string>>()
  const driver: Driver<{ readonly id: string }> = {
    user: { name: "user", id: 1000 },
    create: (spec) =>
      Effect.sync(() => {
        const id = `box-${tags.size + 1}`
        tags.set(id, { ...spec.tags })
        return { sandbox: { id }, id }
      }),
    launch: () => Effect.succeed({ workspace: "/workspace" }),
    destroy: (box) => Effect.sync(() => void tags.delete(box.id)),
    find: (wanted) =>
      Effect.sync(() =>
        [...tags.entries()]
          .filter(([, have]) => Object.entries(wanted).every(([k, v]) => have[k] === v))
          .map(([id, have]) => ({ sandbox: { id }, id, tags: have, state: "running" as const }))
      ),
    endpoint: () => Effect.succeed({ url })
  }
  return {
    provider: "Fake",
    kind: "fake",
    classify: () => ({ reason: "unknown", text: "Fake failed" }),
    connect: () => Effect.succeed(driver)
  }
}

/** Build `layer` with a listener; the events it heard. */
const startHeard = <E>(layer: Layer.Layer<Runtime, E>) =>
  Effect.gen(function*() {
    const events: Array<StartProgressEvent> = []
    const runtime = yield* Layer.build(
      layer.pipe(Layer.provide(StartProgress.layer((event) => Effect.sync(() => void events.push(event)))))
    )
    return { events, info: Context.get(runtime, Runtime).info }
  })

const described = (events: ReadonlyArray<StartProgressEvent>) =>
  events.map((event) => `${event.status} ${event.phase}: ${event.detail}`)

describe("a hosted runtime's start progress", () => {
  it.live("creating, starting the server, waiting for it, ready: in order, with details and elapsed time", () =>
    Effect.gen(function*() {
      const url = yield* aliveServer
      const fake = hostedRuntime(inMemory(url), FakePool)
      const { events, info } = yield* startHeard(fake.layer())
      assert.deepStrictEqual(described(events), [
        "STARTING_RUNTIME creating: the Fake sandbox",
        "STARTING_RUNTIME starting-server: in sandbox box-1",
        `RUNTIME_STARTED waiting-for-server: the action server at ${url}`,
        `READY ready: fake sandbox ${info.id}`
      ])
      const elapsed = events.map((event) => Duration.toMillis(event.elapsed))
      assert.deepStrictEqual(elapsed, [...elapsed].sort((a, b) => a - b))
      assert.isAtLeast(elapsed[0]!, 0)

      // The same session again: attached to (it exists), not created or started anew.
      const again = yield* startHeard(fake.layer({ sessionId: info.id }))
      assert.deepStrictEqual(described(again.events), [
        `RUNTIME_STARTED waiting-for-server: the action server at ${url}`,
        `READY ready: fake sandbox ${info.id}`
      ])
    }).pipe(Effect.scoped))

  it.live("a warm pool's starts report nothing; a runtime taken from it reports ready", () =>
    Effect.gen(function*() {
      const url = yield* aliveServer
      const fake = hostedRuntime(inMemory(url), FakePool)
      const events: Array<StartProgressEvent> = []
      const listener = StartProgress.layer((event) => Effect.sync(() => void events.push(event)))
      const pool = yield* Layer.build(fake.layerPool({ poolSize: 1 }).pipe(Layer.provide(listener)))
      const runtime = yield* Layer.build(fake.layerWarm().pipe(Layer.provide(listener))).pipe(
        Effect.provideContext(pool)
      )
      const { id } = Context.get(runtime, Runtime).info
      assert.deepStrictEqual(described(events), [`READY ready: fake sandbox ${id}`])
    }).pipe(Effect.scoped))
})
