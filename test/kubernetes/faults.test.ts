/**
 * KubernetesRuntime against the stand-in's injected faults (test/providers/faults.ts, the plan every
 * stand-in shares), each on the API server's requests of a start: a 429 with Retry-After and a
 * 503 are waited out under `providerRetry` and the start goes on; a 5xx that lasts fails the start
 * with the provider's `unavailable` and its status; a slow create is waited for (the start ends
 * when it is answered); a connection cut mid-request fails the start at once. Nothing is left
 * behind and nothing hangs.
 */
import { assert, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schedule } from "effect"
import { CmdOutputObservation, CmdRunAction, RuntimeStartError } from "../../src/index.ts"
import type { KubernetesRuntimeOptions } from "../../src/kubernetes.ts"
import { buildRuntime } from "../docker/helpers.ts"
import { describeDocker } from "../docker/infra.ts"
import type { Fault } from "../providers/faults.ts"
import { assertNothingLeft, namespace, sessionIdOf, standInLayer, useStandIn } from "./helpers.ts"
import { eventually } from "./lifecycle.ts"

const PODS = { method: "POST", path: `/api/v1/namespaces/${namespace}/pods` }
const SECRETS = { method: "POST", path: `/api/v1/namespaces/${namespace}/secrets` }

/** Short retries, so a test waits milliseconds, not the default's seconds (a Retry-After is still honoured). */
const providerRetry = Schedule.spaced("20 millis").pipe(Schedule.upTo({ times: 3 }))

const options = (sessionId: string): KubernetesRuntimeOptions => ({ sessionId, deleteWorkspace: true, providerRetry })

describeDocker("KubernetesRuntime under injected faults (stand-in)", () => {
  const cluster = useStandIn()

  /** A start that meets `fault` (`times` times) on `match` still starts, runs a command and leaves nothing. */
  const startsThrough = (match: typeof PODS, fault: Fault, times: number) =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("flt")
      cluster.standIn.faults.inject(match, fault, times)
      const { rt, release } = yield* buildRuntime(standInLayer(cluster, options(sessionId)))
      const out = yield* rt.run(new CmdRunAction({ command: "echo through" }))
      assert.instanceOf(out, CmdOutputObservation)
      assert.strictEqual(out.content.trim(), "through")
      yield* release
      yield* assertNothingLeft(cluster, sessionId)
      return cluster.standIn.faults.hits.splice(0)
    })

  /** A start that meets `fault` on creating its pod: its error, once nothing of it is left. */
  const failsOn = (fault: Fault, times: number) =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("flt")
      cluster.standIn.faults.inject(PODS, fault, times)
      const error = yield* Effect.scoped(Layer.build(standInLayer(cluster, options(sessionId)))).pipe(Effect.flip)
      cluster.standIn.faults.clear()
      cluster.standIn.faults.hits.length = 0
      yield* assertNothingLeft(cluster, sessionId)
      return { error, sessionId }
    })

  it.live("a 429 with Retry-After on the pod's create is waited out", () =>
    Effect.gen(function*() {
      const hits = yield* startsThrough(
        PODS,
        { kind: "status", status: 429, message: "Too many requests, please try again later.", retryAfterSeconds: 1 },
        1
      )
      assert.deepStrictEqual(hits, [{ method: "POST", path: PODS.path, fault: "status" }])
    }), 120_000)

  it.live("503s on the key Secret's create are retried", () =>
    Effect.gen(function*() {
      const hits = yield* startsThrough(
        SECRETS,
        { kind: "status", status: 503, message: "etcdserver: leader changed" },
        2
      )
      assert.strictEqual(hits.length, 2)
    }), 120_000)

  it.live(
    "a 5xx that lasts past the retries fails the start as unavailable, with its status",
    () =>
      Effect.gen(function*() {
        const { error, sessionId } = yield* failsOn({ kind: "status", status: 500, message: "etcd is down" }, 10)
        assert.instanceOf(error, RuntimeStartError)
        assert.strictEqual(error.message, `Cannot create pod effect-sandbox-${sessionId}: etcd is down`)
        assert.strictEqual(error.provider?.reason, "unavailable")
        assert.strictEqual(error.provider?.status, 500)
      }),
    120_000
  )

  it.live("a slow create is waited for, and the start ends once it is answered", () =>
    Effect.gen(function*() {
      const sessionId = sessionIdOf("slow")
      const answered = yield* Deferred.make<void>()
      const letGo = yield* Deferred.make<void>()
      cluster.standIn.faults.inject(PODS, { kind: "hold", until: Effect.runPromise(Deferred.await(letGo)) })
      const started = yield* Effect.forkChild(
        buildRuntime(standInLayer(cluster, options(sessionId))).pipe(
          Effect.tap(() => Deferred.succeed(answered, undefined))
        )
      )
      assert.isTrue(yield* eventually(async () => cluster.standIn.faults.hits.length === 1), "the create never came")
      assert.isFalse(yield* Deferred.isDone(answered), "the start ended before its pod was created")
      yield* Deferred.succeed(letGo, undefined)
      const { rt, release } = yield* Fiber.join(started)
      const out = yield* rt.run(new CmdRunAction({ command: "echo slow" }))
      assert.instanceOf(out, CmdOutputObservation)
      assert.strictEqual(out.content.trim(), "slow")
      yield* release
      cluster.standIn.faults.hits.length = 0
      yield* assertNothingLeft(cluster, sessionId)
    }), 120_000)

  it.live("a connection cut mid-request fails the start at once, leaving nothing", () =>
    Effect.gen(function*() {
      const { error, sessionId } = yield* failsOn({ kind: "cut" }, 1)
      assert.instanceOf(error, RuntimeStartError)
      assert.match(error.message, new RegExp(`^Cannot create pod effect-sandbox-${sessionId}: `))
      assert.strictEqual(error.provider?.reason, "unknown")
    }), 120_000)
})
