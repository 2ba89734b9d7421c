/**
 * The HTTP transport's schedules are values a layer can replace (`schedules`): the replacement
 * is the one used. A wait schedule that ends fails the start at once with the same
 * RuntimeStartError instead of waiting out the time budget; a retry schedule bounds how often
 * a refused request is sent again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { aliveSchedule, retrySchedule, Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"

/** An HTTP server on a free loopback port, closed with the scope; `handle` answers each request. */
const httpServer = (handle: Parameters<typeof createServer>[1]) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer(handle).listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

/** A port nobody listens on (bound, then released). */
const closedPort = Effect.scoped(httpServer(() => undefined))

const startFailure = <E extends { readonly message: string }>(layer: Layer.Layer<Runtime, E>) =>
  Effect.flip(Effect.scoped(Layer.build(layer))).pipe(Effect.map((error) => String(error.message)))

describe("runtime schedules", () => {
  it("are exported values", () => {
    assert.isTrue(Schedule.isSchedule(aliveSchedule))
    assert.isTrue(Schedule.isSchedule(retrySchedule))
  })

  it.live("an attach whose wait schedule ends fails at once, not after its 60 s budget", () =>
    Effect.gen(function*() {
      const url = yield* closedPort
      const started = Date.now()
      const message = yield* startFailure(
        LocalRuntime.connect({ url, aliveTimeout: "60 seconds", schedules: { waitUntilAlive: Schedule.recurs(2) } })
      )
      assert.strictEqual(
        message,
        `The action server at ${url} did not answer /alive before its wait schedule (schedules.waitUntilAlive) ended.`
          + " Check its log for a start-up error."
      )
      assert.isBelow(Date.now() - started, 5_000)
    }))

  it.live("the time budget still ends a wait whose schedule does not", () =>
    Effect.gen(function*() {
      const url = yield* closedPort
      const message = yield* startFailure(LocalRuntime.connect({ url, aliveTimeout: "300 millis" }))
      assert.strictEqual(
        message,
        `The action server at ${url} did not answer /alive within 300ms. Check its log for a start-up error.`
      )
    }))

  it.live("a request the server keeps refusing (429) is sent as often as the retry schedule says", () =>
    Effect.scoped(Effect.gen(function*() {
      let actions = 0
      const url = yield* httpServer((request, response) => {
        if (request.url === "/alive") return void response.end("{\"status\":\"ok\"}")
        if (request.url === "/execute_action") actions++
        response.statusCode = 429
        response.end("{\"detail\":\"slow down\"}")
      })
      const error = yield* Runtime.use((rt) => Effect.flip(rt.runCommand("echo hi"))).pipe(
        Effect.provide(LocalRuntime.connect({ url, schedules: { retry: Schedule.recurs(1) } }))
      )
      assert.strictEqual(error._tag, "RuntimeDisconnectedError")
      assert.strictEqual(actions, 2)
    })))
})
