/**
 * What DaytonaRuntime does with the faults of the shared plan (test/providers/faults.ts) on
 * Daytona's create, the call every start makes first: a 429 with `Retry-After`, a 5xx, a create
 * answered late, a connection cut before the answer. Nothing may hang, and no sandbox may be left.
 */
import { Daytona } from "@daytonaio/sdk"
import { assert, it } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import type { ProviderReason, RuntimeStartError } from "../../../src/index.ts"
import { listSandboxes } from "../../../src/providers/daytona/listing.ts"
import { buildRuntime, startError } from "../../docker/helpers.ts"
import { describeDocker } from "../../docker/infra.ts"
import type { Fault } from "../faults.ts"
import { assertAllDeleted, CREATE, daytonaLayer, gate, useStandIn } from "./infra.ts"
import type { DaytonaStandIn } from "./server.ts"

/** The creates that reached the API, and those a fault answered. */
const created = (standIn: DaytonaStandIn) =>
  standIn.requests.filter((r) => r.method === "POST" && r.path === "/sandbox").length
const faulted = (standIn: DaytonaStandIn) =>
  standIn.faults.hits.filter((hit) => hit.method === "POST" && hit.path === "/api/sandbox").length

/** The start's failure: Daytona's refusal as data. */
const refusedWith = (error: RuntimeStartError, reason: ProviderReason, status: number | undefined) => {
  assert.strictEqual(error.reason, "provider")
  assert.deepStrictEqual([error.provider?.reason, error.provider?.status], [reason, status])
}

const status = (code: number, message: string, retryAfterSeconds?: number): Fault => ({
  kind: "status",
  status: code,
  message,
  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds })
})

describeDocker("DaytonaRuntime under injected faults (stand-in)", () => {
  const standIn = useStandIn()

  it.live(
    "429 with Retry-After: the create is sent again no sooner than Daytona asked, and the start succeeds",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const [made, refused] = [created(s), faulted(s)]
        s.faults.inject(CREATE, status(429, "ThrottlerException: Too Many Requests", 3))
        const began = Date.now()
        const { rt, release } = yield* buildRuntime(daytonaLayer(s))
        assert.isAtLeast(Date.now() - began, 3000)
        assert.deepStrictEqual([created(s) - made, faulted(s) - refused], [1, 1])
        assert.strictEqual((yield* rt.runCommand("echo after-429")).content, "after-429")
        yield* release
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live(
    "a 500, 502 and 503 are each waited out on providerRetry, and the start succeeds",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const [made, refused] = [created(s), faulted(s)]
        s.faults.inject(CREATE, status(500, "Internal server error"))
        s.faults.inject(CREATE, status(502, "Bad Gateway"))
        s.faults.inject(CREATE, status(503, "Service Unavailable"))
        const { rt, release } = yield* buildRuntime(daytonaLayer(s))
        assert.deepStrictEqual([created(s) - made, faulted(s) - refused], [1, 3])
        assert.strictEqual((yield* rt.runCommand("echo after-5xx")).content, "after-5xx")
        yield* release
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live(
    "a 503 outlasting providerRetry fails the start with Daytona's text, reason unavailable, nothing made",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const made = created(s)
        s.faults.inject(CREATE, status(503, "Service Unavailable"), 2)
        const quick = Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 1 }))
        const error = (yield* startError(daytonaLayer(s, { providerRetry: quick }))) as RuntimeStartError
        assert.strictEqual(
          error.message,
          "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: Service Unavailable"
        )
        refusedWith(error, "unavailable", 503)
        assert.strictEqual(created(s), made)
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live(
    "a slow create: the runtime waits for its answer without asking again; interrupted meanwhile, it deletes the sandbox once the answer comes",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const made = created(s)
        const answer = gate()
        s.faults.inject(CREATE, { kind: "hold", until: answer.promise })
        const refused = faulted(s)
        const starting = yield* Effect.scoped(buildRuntime(daytonaLayer(s, { sessionId: "dtn-fault-hold" }))).pipe(
          Effect.forkChild
        )
        yield* Effect.sync(() => faulted(s) > refused).pipe(
          Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (hit) => hit })
        )
        // Interrupted while Daytona has not answered: the interruption waits for the answer.
        const interrupting = yield* Fiber.interrupt(starting).pipe(Effect.forkChild)
        answer.open()
        yield* Fiber.join(interrupting)
        assert.strictEqual(created(s) - made, 1)
        const sandbox = [...s.sandboxes.byId.values()].find((x) =>
          x.labels["effect-sandbox.session"] === "dtn-fault-hold"
        )
        assert.strictEqual(sandbox?.state, "destroyed")
        assertAllDeleted(s)
      }),
    120_000
  )

  it.live(
    "a connection cut before the create's answer fails the start at once, reason unknown, not sent again, nothing left",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const made = created(s)
        s.faults.inject(CREATE, { kind: "cut" })
        const error = (yield* startError(daytonaLayer(s, { sessionId: "dtn-fault-cut" }))) as RuntimeStartError
        assert.strictEqual(
          error.message,
          "Daytona could not create a sandbox from snapshot effect-sandbox-runtime: socket hang up"
        )
        refusedWith(error, "unknown", undefined)
        assert.strictEqual(created(s), made)
        assertAllDeleted(s)
      }),
    60_000
  )

  it.live(
    "a sandbox destroyed between a list's page and the SDK's ask for its toolbox URL: the listing is taken again, not failed",
    () =>
      Effect.gen(function*() {
        const s = standIn()
        const { release } = yield* buildRuntime(daytonaLayer(s, { sessionId: "dtn-fault-vanished" }))
        const labels = { "effect-sandbox.session": "dtn-fault-vanished" }
        const client = new Daytona({ apiKey: s.apiKey, apiUrl: s.apiUrl })
        const vanished = status(404, "Sandbox with ID or name gone not found")
        s.faults.inject({ method: "GET", path: /\/toolbox-proxy-url$/ }, vanished)
        const listed = yield* Effect.promise(() => listSandboxes(client, labels))
        assert.deepStrictEqual(listed.map((one) => one.labels["effect-sandbox.session"]), ["dtn-fault-vanished"])
        // The SDK's own listing fails on the same 404.
        s.faults.inject({ method: "GET", path: /\/toolbox-proxy-url$/ }, vanished)
        const direct = yield* Effect.tryPromise(async () => {
          for await (const _ of client.list({ labels })) { /* the first item fails */ }
        }).pipe(Effect.flip)
        assert.match(String(direct.cause), /not found/)
        yield* release
        assertAllDeleted(s)
      }),
    120_000
  )
})
