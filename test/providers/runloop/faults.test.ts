/**
 * RunloopRuntime against the faults every stand-in injects (test/providers/faults.ts), through the
 * SDK with its own retries off: a 429 with `Retry-After` is waited out at least that long, 5xx
 * answers are retried, a slow create is waited for (and a start interrupted meanwhile still shuts
 * the devbox down once it exists), and a connection cut after Runloop made the devbox is sent again
 * under the same idempotency key, so no second devbox is made; a server start sent again after a cut
 * starts no second server. Nothing hangs, nothing is left.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import type { RunloopRuntimeOptions } from "../../../src/runloop.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { runloopLayer, useStandIn } from "./fixture.ts"
import type { RunloopStandIn } from "./server.ts"

/** Runloop's create route (the path alone would match every devbox route under it). */
const CREATE = { method: "POST", path: /^\/v1\/devboxes$/ } as const

/** The server's start (the image's line, then the payload's): the only commands sent as `execute_async`. */
const SERVER_START = { method: "POST", path: /\/execute_async$/ } as const

/** Retries quick enough that a Retry-After is what sets the pace. */
const QUICK = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 4 }))

const creates = (s: RunloopStandIn) => s.requests.filter((r) => r.method === "POST" && r.path === "/v1/devboxes")

/** Hold the next create until the function returned is called: a slow create, ended by the test. */
const holdNextCreate = (s: RunloopStandIn) => {
  let letGo!: () => void
  s.faults.inject(CREATE, { kind: "hold", until: new Promise<void>((resolve) => letGo = resolve) })
  return letGo
}

/** Once the stand-in has received `count` creates in all. */
const createsArrived = (s: RunloopStandIn, count: number) =>
  Effect.sync(() => creates(s).length).pipe(
    Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (sent) => sent >= count })
  )

/** Every devbox the stand-in holds is shut down. */
const assertAllShutDown = (s: RunloopStandIn) =>
  assert.deepStrictEqual([...s.devboxes.byId.values()].filter((d) => d.status !== "shutdown").map((d) => d.id), [])

/** Start a runtime, run one command in it, release it: every devbox shut down. */
const startAndRelease = (s: RunloopStandIn, options: RunloopRuntimeOptions = {}) =>
  Effect.gen(function*() {
    const { rt, release } = yield* buildRuntime(runloopLayer(s, { providerRetry: QUICK, ...options }))
    assert.strictEqual((yield* rt.runCommand("echo up")).content, "up")
    yield* release
    assertAllShutDown(s)
  })

describeDocker("RunloopRuntime under injected faults (stand-in)", () => {
  const standIn = useStandIn({ holdMs: 2_000 })

  it.live("a 429 with Retry-After: 2 is retried no sooner than two seconds later", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = creates(s).length
      s.faults.inject(CREATE, { kind: "status", status: 429, message: "Too many requests", retryAfterSeconds: 2 })
      yield* startAndRelease(s)
      const [refused, accepted] = creates(s).slice(before)
      assert.strictEqual(creates(s).length - before, 2)
      assert.isAtLeast(accepted!.at - refused!.at, 2000)
    }), 120_000)

  it.live("5xx answers (500, 502, 503) are retried until Runloop serves the call", () =>
    Effect.gen(function*() {
      const s = standIn()
      const before = creates(s).length
      for (const status of [500, 502, 503]) s.faults.inject(CREATE, { kind: "status", status, message: "upstream" })
      // A state poll too: every call goes through the one retry, not only the create.
      s.faults.inject({ method: "POST", path: /\/wait_for_status$/ }, { kind: "status", status: 503, message: "busy" })
      yield* startAndRelease(s)
      assert.strictEqual(creates(s).length - before, 4)
      assert.deepStrictEqual(s.faults.hits.slice(-4).map((hit) => hit.fault), ["status", "status", "status", "status"])
    }), 120_000)

  it.live(
    "a slow create is waited for; a start interrupted meanwhile shuts the devbox down once Runloop answers",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length
        const letGo = holdNextCreate(s)
        const start = yield* Effect.forkChild(buildRuntime(runloopLayer(s, { providerRetry: QUICK })))
        yield* createsArrived(s, before + 1)
        // The create is held: interrupting the start waits for its answer, then shuts the devbox down.
        const interrupted = yield* Effect.forkChild(Fiber.interrupt(start))
        letGo()
        yield* Fiber.join(interrupted)
        assert.strictEqual(creates(s).length - before, 1)
        assertAllShutDown(s)
        // Not interrupted, a held create is simply waited for.
        const letGoAgain = holdNextCreate(s)
        const second = yield* Effect.forkChild(startAndRelease(s))
        yield* createsArrived(s, before + 2)
        letGoAgain()
        yield* Fiber.join(second)
        assert.strictEqual(creates(s).length - before, 2)
      }),
    120_000
  )

  it.live(
    "a connection cut after Runloop made the devbox: given up after requestTimeoutMs (the SDK would wait for ever), sent again under the same idempotency key, no second devbox",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const before = creates(s).length
        const devboxes = s.devboxes.byId.size
        s.faults.inject(CREATE, { kind: "cut" })
        // And a cut mid-start, on a plain call (the server's start: cut before Runloop served it, so
        // sent again; one it served would start a second server, which fails to listen).
        s.faults.inject(SERVER_START, { kind: "cut", unserved: true })
        yield* startAndRelease(s, { requestTimeoutMs: 2_000 })
        const sent = creates(s).slice(before)
        assert.strictEqual(sent.length, 2)
        assert.strictEqual(s.devboxes.byId.size - devboxes, 1)
        assert.deepStrictEqual(s.faults.hits.slice(-2).map((hit) => hit.fault), ["cut", "cut"])
      }),
    120_000
  )

  it.live(
    "a connection cut after Runloop started the server: the start sent again stands down (exit 75) instead of starting a second server, and the runtime uses the first",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const known = new Set(s.devboxes.byId.keys())
        const sentBefore = s.requests.filter((r) => SERVER_START.path.test(r.path)).length
        s.faults.inject(SERVER_START, { kind: "cut" })
        const { rt, release } = yield* buildRuntime(runloopLayer(s, { providerRetry: QUICK, requestTimeoutMs: 2_000 }))
        assert.strictEqual((yield* rt.runCommand("echo up")).content, "up")
        const devbox = [...s.devboxes.byId.keys()].find((id) => !known.has(id))
        const executions = [...s.devboxes.executions.values()].filter((e) => e.devboxId === devbox)
        // Two starts reached the devbox: the first runs the server, the copy sent again stood down.
        assert.strictEqual(s.requests.filter((r) => SERVER_START.path.test(r.path)).length - sentBefore, 2)
        assert.deepStrictEqual(executions.map((e) => e.exitStatus), [null, 75])
        assert.strictEqual(s.faults.hits.at(-1)?.fault, "cut")
        yield* release
        assertAllShutDown(s)
      }),
    120_000
  )
})
