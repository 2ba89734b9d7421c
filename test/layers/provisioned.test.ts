/**
 * The provisioner contract (services/Provisioner.ts) and its one builder (provisioned/provisioned.ts),
 * through a provisioner that is nothing but a server process: what a new runtime (Kubernetes, a cloud)
 * implements. The builder must give it the status stream, the `/alive` wait raced against its start
 * failure, its hand-over URLs, pause/resume, the disconnect watch with its explanation (ERROR_MEMORY), a
 * warm pool, and release everything it provisioned with the layer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Redacted, Ref, Schedule, Scope, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startServerProcess } from "../../src/layers/local/serverProcess.ts"
import {
  provisionedLayer,
  type ProvisionedPool,
  provisionedPoolLayer,
  warmLayer
} from "../../src/provisioned/provisioned.ts"
import { RuntimeDisconnectedError, RuntimeStartError } from "../../src/schema/errors.ts"
import { toolCapabilities } from "../../src/serverStart/serverTools.ts"
import type { ProvisionedSandbox, Provisioner } from "../../src/services/Provisioner.ts"
import { Runtime } from "../../src/services/Runtime.ts"

const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), prefix)))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** What the tests see of each provisioned sandbox: its server's pid and workspace, and whether it was released. */
interface Made {
  readonly pid: number
  readonly workspace: string
  released: boolean
}

/**
 * The whole of a provisioner: start a server in the provision's scope and say where it is. `extra`
 * adds the optional parts under test.
 */
const serverProvisioner = (
  made: Array<Made>,
  extra: (server: { readonly baseUrl: string; readonly pid: number }) => Partial<ProvisionedSandbox> = () => ({})
): Provisioner => ({
  kind: "fake",
  provision: (onStatus) =>
    Effect.gen(function*() {
      yield* onStatus("BUILDING_RUNTIME")
      const sessionId = `provisioned-${randomUUID()}`
      const workspace = yield* tempDir("provisioned-ws-")
      const stateDir = yield* tempDir("provisioned-state-")
      const sessionApiKey = Redacted.make(`key-${randomUUID()}`)
      const server = yield* startServerProcess({
        workspace,
        stateDir,
        sessionId,
        sessionApiKey,
        noChangeTimeoutSeconds: 10
      })
      const record: Made = { pid: server.pid, workspace, released: false }
      made.push(record)
      // Runs before the server's own finalizer (added first): the provision's scope is closing.
      yield* Effect.addFinalizer(() => Effect.sync(() => (record.released = true)))
      return {
        id: sessionId,
        baseUrl: server.baseUrl,
        sessionApiKey,
        workspace,
        capabilities: toolCapabilities({}, { pause: false }),
        ...extra(server)
      }
    })
})

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Build a runtime layer in its own scope, so a test can release it. */
const build = <E>(layer: Layer.Layer<Runtime, E>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(layer, scope)
    return { rt: Context.get(context, Runtime), release: Scope.close(scope, Exit.void) }
  })

describe("provisioned runtimes", () => {
  it.live(
    "a provisioner's server becomes a runtime: statuses, its URLs, released with the layer",
    () =>
      Effect.gen(function*() {
        const made: Array<Made> = []
        const provisioner = serverProvisioner(
          made,
          () => ({ handOver: Effect.succeed({ ide: "http://127.0.0.1:9/ide" }) })
        )
        const { release, rt } = yield* build(provisionedLayer({}, () => Effect.succeed(provisioner)))
        const statuses = yield* rt.status.pipe(Stream.runCollect, Effect.forkChild)
        assert.strictEqual(rt.info.kind, "fake")
        assert.strictEqual(rt.info.workspace, made[0]!.workspace)
        assert.deepStrictEqual(Object.keys(rt.info.urls), ["actionServer", "ide"])
        assert.strictEqual(rt.info.urls.ide, "http://127.0.0.1:9/ide")
        assert.strictEqual((yield* rt.runCommand("pwd")).content, made[0]!.workspace)
        yield* release
        assert.deepStrictEqual(yield* Fiber.join(statuses), [
          "STARTING_RUNTIME",
          "BUILDING_RUNTIME",
          "RUNTIME_STARTED",
          "READY",
          "STOPPED"
        ])
        assert.isTrue(made[0]!.released)
        assert.isFalse(alive(made[0]!.pid))
        assert.isFalse(existsSync(made[0]!.workspace))
      }),
    30_000
  )

  it.live(
    "a start failure wins over the /alive wait, with its own message, and what was provisioned is released",
    () =>
      Effect.gen(function*() {
        const made: Array<Made> = []
        const provisioner = serverProvisioner(made, () => ({
          // Nothing listens there: only the start failure can end the wait.
          baseUrl: "http://127.0.0.1:9",
          startFailure: Effect.fail(new RuntimeStartError({ message: "The pod was evicted: ImagePullBackOff." }))
        }))
        const error = yield* Effect.flip(build(provisionedLayer({}, () => Effect.succeed(provisioner))))
        assert.instanceOf(error, RuntimeStartError)
        assert.strictEqual(error.message, "The pod was evicted: ImagePullBackOff.")
        assert.isTrue(made[0]!.released)
        assert.isFalse(alive(made[0]!.pid))
      }),
    30_000
  )

  it.live(
    "a sandbox that stops under its runtime shows ERROR_MEMORY and the provisioner's reason",
    () =>
      Effect.gen(function*() {
        const made: Array<Made> = []
        const stopped = yield* Deferred.make<void>()
        const provisioner = serverProvisioner(made, () => ({
          disconnect: {
            stopped: Deferred.await(stopped),
            explain: Effect.succeed({ outOfMemory: true, message: "the pod was OOMKilled (limit 512Mi)" })
          }
        }))
        const { release, rt } = yield* build(provisionedLayer({}, () => Effect.succeed(provisioner)))
        process.kill(made[0]!.pid, "SIGKILL")
        yield* Deferred.succeed(stopped, undefined)
        yield* rt.status.pipe(Stream.takeUntil((s) => s === "ERROR_MEMORY"), Stream.runDrain)
        const error = yield* Effect.flip(rt.runCommand("echo too late"))
        assert.instanceOf(error, RuntimeDisconnectedError)
        assert.include(
          error.message,
          ": the pod was OOMKilled (limit 512Mi). Its session is lost; start a new runtime."
        )
        assert.strictEqual(yield* rt.currentStatus, "ERROR_MEMORY")
        yield* release
      }),
    30_000
  )

  it.live(
    "pause and resume are the provisioner's; the builder waits for /alive after the resume",
    () =>
      Effect.gen(function*() {
        const made: Array<Made> = []
        const calls = yield* Ref.make<ReadonlyArray<string>>([])
        const provisioner = serverProvisioner(made, () => ({
          capabilities: toolCapabilities({}, { pause: true }),
          pause: Ref.update(calls, (c) => [...c, "pause"]),
          resume: Ref.update(calls, (c) => [...c, "resume"])
        }))
        const { release, rt } = yield* build(provisionedLayer({}, () => Effect.succeed(provisioner)))
        yield* rt.pause
        assert.strictEqual(yield* rt.currentStatus, "PAUSED")
        yield* rt.resume
        assert.strictEqual(yield* rt.currentStatus, "READY")
        assert.deepStrictEqual(yield* Ref.get(calls), ["pause", "resume"])
        assert.strictEqual((yield* rt.runCommand("echo back")).content, "back")
        yield* release
      }),
    30_000
  )

  it.live(
    "a warm pool of any provisioner hands out ready sandboxes and releases the idle ones with itself",
    () =>
      Effect.gen(function*() {
        class Pool extends Context.Service<Pool, ProvisionedPool>()("test/ProvisionedPool") {}
        const made: Array<Made> = []
        const poolScope = yield* Scope.make()
        const pool = yield* Layer.buildWithScope(
          provisionedPoolLayer(
            Pool,
            { runtime: "FakeRuntime", size: 1, what: "fake sandbox" },
            {},
            () => Effect.succeed(serverProvisioner(made))
          ),
          poolScope
        )
        const { release, rt } = yield* build(
          warmLayer(Pool, Effect.succeed).pipe(Layer.provide(Layer.succeedContext(pool)))
        )
        assert.strictEqual(rt.info.kind, "fake")
        assert.strictEqual((yield* rt.runCommand("echo warm")).content, "warm")
        yield* release
        assert.isTrue(made[0]!.released)
        assert.isFalse(alive(made[0]!.pid))
        // The refill started another; closing the pool releases it.
        yield* Effect.suspend(() => made.length >= 2 ? Effect.void : Effect.fail("no refill yet")).pipe(
          Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 200 })
        )
        yield* Scope.close(poolScope, Exit.void)
        assert.isTrue(made.every((m) => m.released && !alive(m.pid)))
      }),
    45_000
  )
})
