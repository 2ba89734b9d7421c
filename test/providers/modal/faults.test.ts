/**
 * ModalRuntime against the faults every stand-in injects (test/providers/faults.ts), mapped onto
 * gRPC by the stand-in: a 429 is RESOURCE_EXHAUSTED (gRPC carries no Retry-After; our schedule
 * paces the retries), a 5xx is INTERNAL or UNAVAILABLE (the SDK retries those itself, then ours),
 * a slow create is waited for (and a start interrupted meanwhile terminates the sandbox once it
 * exists), and a connection cut after Modal made the sandbox is sent again by the SDK under its
 * idempotency key, so no second sandbox is made. Nothing hangs, nothing is left.
 */
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { ModalRuntime } from "../../../src/modal.ts"
import { buildRuntime } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import { standinOptions, useModalStandin } from "./fixture.ts"
import type { Standin } from "./server.ts"

/** The create call, as a fault matches it (its method's name as the path). */
const CREATE = { path: "SandboxCreateV2" } as const

/** Retries quick enough for a test. */
const QUICK = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 4 }))

/** Every sandbox the stand-in made has ended, and no container is left. */
const nothingLeft = (s: Standin) =>
  Effect.promise(() => s.containers()).pipe(
    Effect.map((left) => {
      assert.deepStrictEqual(left, [])
      assert.deepStrictEqual([...s.sandboxes.values()].filter((sb) => sb.result === undefined).map((sb) => sb.id), [])
    })
  )

describeDocker("ModalRuntime under injected faults (stand-in)", () => {
  const standinOf = useModalStandin()

  const creates = () => standinOf().calls.filter((c) => c.method === "SandboxCreateV2").length
  const layer = () => ModalRuntime.layer(standinOptions(standinOf(), { providerRetry: QUICK }))

  const startAndRelease = Effect.gen(function*() {
    const { rt, release } = yield* buildRuntime(layer())
    assert.strictEqual((yield* rt.runCommand("echo up")).content.trim(), "up")
    yield* release
    yield* nothingLeft(standinOf())
  })

  it.live(
    "a 429 (RESOURCE_EXHAUSTED, with a Retry-After gRPC cannot carry) is retried under our schedule",
    () =>
      Effect.gen(function*() {
        const before = creates()
        standinOf().faults.inject(CREATE, {
          kind: "status",
          status: 429,
          message: "Too many sandbox creations",
          retryAfterSeconds: 1
        }, 2)
        yield* startAndRelease
        assert.strictEqual(creates() - before, 3)
      }),
    120_000
  )

  it.live("5xx answers (INTERNAL, UNAVAILABLE) are retried, by the SDK and then by us", () =>
    Effect.gen(function*() {
      const before = creates()
      for (const status of [500, 503, 502, 504, 503]) {
        standinOf().faults.inject(CREATE, { kind: "status", status, message: "upstream" })
      }
      // A call of the start besides the create, too.
      standinOf().faults.inject({ path: "SandboxGetTunnelsV2" }, { kind: "status", status: 503, message: "busy" })
      yield* startAndRelease
      assert.strictEqual(creates() - before, 6)
    }), 120_000)

  it.live(
    "a slow create is waited for; a start interrupted meanwhile terminates the sandbox once Modal answers",
    () =>
      Effect.gen(function*() {
        const before = creates()
        let letGo!: () => void
        standinOf().faults.inject(CREATE, { kind: "hold", until: new Promise<void>((resolve) => letGo = resolve) })
        const start = yield* Effect.forkChild(buildRuntime(layer()))
        yield* Effect.sync(creates).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (sent) => sent > before })
        )
        const interrupted = yield* Effect.forkChild(Fiber.interrupt(start))
        letGo()
        yield* Fiber.join(interrupted)
        assert.strictEqual(creates() - before, 1)
        yield* nothingLeft(standinOf())
        standinOf().faults.inject(CREATE, { kind: "delay", millis: 1500 })
        yield* startAndRelease
      }),
    120_000
  )

  it.live(
    "a connection cut after Modal made the sandbox: sent again under the SDK's idempotency key, no second sandbox",
    () =>
      Effect.gen(function*() {
        const made = standinOf().sandboxes.size
        const before = creates()
        standinOf().faults.inject(CREATE, { kind: "cut" })
        yield* startAndRelease
        assert.strictEqual(creates() - before, 2)
        assert.strictEqual(standinOf().sandboxes.size - made, 1)
        assert.deepStrictEqual(standinOf().faults.hits.at(-1)?.fault, "cut")
      }),
    120_000
  )
})
