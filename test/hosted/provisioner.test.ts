/**
 * The generic hosted runtime (src/hosted/provisioner.ts, reaper.ts, providerCall.ts) against an
 * in-memory driver: what it does with the verbs, once for every provider. Attach (a paused
 * sandbox resumed, a stopped one started and launched again, none at all refused for `attach`),
 * release under `keepRuntimeAlive`, the keep-alive loop that rests while paused, the start failure
 * with the server's exit code and output, the disconnect watch, pause errors, the reaper's one
 * liveness rule, and classified retries with `Retry-After`. Time is the TestClock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Redacted, Schedule, Scope } from "effect"
import { TestClock } from "effect/testing"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { TAGS } from "../../src/hosted/ownerTags.ts"
import { makeProviderCall } from "../../src/hosted/providerCall.ts"
import { provisionHosted } from "../../src/hosted/provisioner.ts"
import { reapOrphans } from "../../src/hosted/reaper.ts"
import { ProviderError, RuntimeStartError } from "../../src/schema/errors.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import type { Driver, Found, SandboxState, ServerExit } from "../../src/services/Driver.ts"

interface Box {
  readonly id: string
  state: SandboxState["_tag"]
  tags: Record<string, string>
}

/** An in-memory provider: what the hosted runtime asked of it, in order. */
const fakeProvider = (options: { readonly serverExit?: Deferred.Deferred<ServerExit> } = {}) => {
  const boxes = new Map<string, Box>()
  const calls: Array<string> = []
  let next = 0
  const refuse = (operation: string) =>
    new ProviderError({ provider: "Fake", operation, reason: "not-found", message: `Fake could not ${operation}` })
  const driver: Driver<Box> = {
    user: { name: "user", id: 1000 },
    create: (spec) =>
      Effect.sync(() => {
        const box: Box = { id: `box-${++next}`, state: "running", tags: { ...spec.tags } }
        boxes.set(box.id, box)
        calls.push(`create ${box.id}`)
        return { sandbox: box, id: box.id }
      }),
    launch: (box) =>
      Effect.sync(() => {
        calls.push(`launch ${box.id}`)
        return {
          workspace: "/workspace",
          ...(options.serverExit === undefined ? {} : { serverExit: Deferred.await(options.serverExit) })
        }
      }),
    destroy: (box) =>
      Effect.sync(() => {
        calls.push(`destroy ${box.id}`)
        boxes.delete(box.id)
      }),
    find: (tags) =>
      Effect.sync(() =>
        [...boxes.values()]
          .filter((box) => Object.entries(tags).every(([k, v]) => box.tags[k] === v))
          .map((box): Found<Box> => ({ sandbox: box, id: box.id, tags: box.tags, state: box.state }))
      ),
    state: (box) =>
      Effect.sync((): SandboxState =>
        boxes.has(box.id)
          ? { _tag: box.state } as SandboxState
          : { _tag: "gone", why: `Fake no longer has ${box.id}` }
      ),
    endpoint: (box, port) => Effect.succeed({ url: `http://${box.id}:${port}` }),
    start: (box) =>
      Effect.sync(() => {
        calls.push(`start ${box.id}`)
        box.state = "running"
      }),
    keepAlive: {
      every: "10 seconds",
      touch: (box) => Effect.sync(() => void calls.push(`touch ${box.id}`))
    },
    pause: {
      keepsMemory: true,
      pause: (box) =>
        box.tags.refusePause === "true" ? Effect.fail(refuse(`pause ${box.id}`)) : Effect.sync(() => {
          calls.push(`pause ${box.id}`)
          box.state = "paused"
        }),
      resume: (box) =>
        Effect.sync(() => {
          calls.push(`resume ${box.id}`)
          box.state = "running"
        })
    }
  }
  return { driver, boxes, calls }
}

const contextOf = (
  driver: Driver<Box>,
  options: { readonly sessionId?: string; readonly attachOnly?: boolean; readonly keepAlive?: boolean } = {}
) => ({
  provider: "Fake",
  noun: "sandbox",
  kind: "fake",
  driver,
  options: options.sessionId === undefined ? {} : { sessionId: options.sessionId },
  sandbox: new SandboxConfig({ keepRuntimeAlive: options.keepAlive === true }),
  attachOnly: options.attachOnly === true
})

const noStatus = () => Effect.void

describe("the hosted runtime over a driver", () => {
  it.effect("creates, tags, launches; the keep-alive touches every period and rests while paused", () =>
    Effect.gen(function*() {
      const { driver, boxes, calls } = fakeProvider()
      const scope = yield* Scope.make()
      const box = yield* provisionHosted(contextOf(driver), noStatus).pipe(Scope.provide(scope))
      const made = [...boxes.values()][0]!
      assert.strictEqual(made.tags[TAGS.session], box.id)
      assert.strictEqual(made.tags[TAGS.ownerPid], String(process.pid))
      assert.strictEqual(
        made.tags[TAGS.sessionKey],
        Redacted.value(box.sessionApiKey)
      )
      assert.strictEqual(box.baseUrl, `http://${made.id}:8000`)
      assert.deepStrictEqual(calls, [`create ${made.id}`, `launch ${made.id}`])
      yield* TestClock.adjust("25 seconds")
      assert.deepStrictEqual(calls.filter((c) => c.startsWith("touch")).length, 2)
      yield* box.pause!
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(calls.filter((c) => c.startsWith("touch")).length, 2)
      yield* box.resume!
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(calls.filter((c) => c.startsWith("touch")).length, 3)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(calls.at(-1), `destroy ${made.id}`)
      assert.strictEqual(boxes.size, 0)
    }))

  it.effect("a kept-alive sandbox outlives its runtime; a layer with its session id attaches, resuming it", () =>
    Effect.gen(function*() {
      const { driver, boxes, calls } = fakeProvider()
      const first = yield* Scope.make()
      const made = yield* provisionHosted(contextOf(driver, { sessionId: "s-1", keepAlive: true }), noStatus).pipe(
        Scope.provide(first)
      )
      yield* made.pause!
      yield* Scope.close(first, Exit.void)
      assert.strictEqual(boxes.size, 1)
      const second = yield* Scope.make()
      const attached = yield* provisionHosted(contextOf(driver, { sessionId: "s-1" }), noStatus).pipe(
        Scope.provide(second)
      )
      assert.strictEqual(attached.baseUrl, made.baseUrl)
      assert.strictEqual(calls.filter((c) => c.startsWith("create")).length, 1)
      assert.isTrue(calls.includes("resume box-1"))
      // Attached to a running server: nothing launched again, so no start failure to race.
      assert.isUndefined(attached.startFailure)
      yield* Scope.close(second, Exit.void)
      assert.strictEqual(boxes.size, 0)
    }))

  it.effect("a stopped sandbox attached to is started and its server launched again", () =>
    Effect.gen(function*() {
      const { driver, boxes, calls } = fakeProvider()
      yield* provisionHosted(contextOf(driver, { sessionId: "s-2", keepAlive: true }), noStatus).pipe(Effect.scoped)
      boxes.get("box-1")!.state = "stopped"
      const attached = yield* provisionHosted(contextOf(driver, { sessionId: "s-2", attachOnly: true }), noStatus).pipe(
        Effect.scoped
      )
      assert.strictEqual(attached.id, "s-2")
      assert.deepStrictEqual(calls.slice(-3), ["start box-1", "launch box-1", "destroy box-1"])
    }))

  it.effect("attach to a session that has no sandbox is a start error, and nothing is made", () =>
    Effect.gen(function*() {
      const { driver, boxes } = fakeProvider()
      const error = yield* provisionHosted(contextOf(driver, { sessionId: "none", attachOnly: true }), noStatus).pipe(
        Effect.scoped,
        Effect.flip
      )
      assert.strictEqual(error.message, "Fake has no sandbox of session none to attach to.")
      assert.strictEqual(boxes.size, 0)
    }))

  it.effect("a server that exits at start fails with reason server-exited, its code and its last output", () =>
    Effect.gen(function*() {
      const serverExit = yield* Deferred.make<ServerExit>()
      const { driver } = fakeProvider({ serverExit })
      const box = yield* provisionHosted(contextOf(driver), noStatus).pipe(Effect.scoped)
      const waiting = yield* Effect.forkChild(Effect.flip(box.startFailure!))
      yield* Deferred.succeed(serverExit, { exitCode: 3, output: "booting\nError: no such plugin\n" })
      const error = yield* Fiber.join(waiting)
      assert.instanceOf(error, RuntimeStartError)
      assert.strictEqual(error.reason, "server-exited")
      assert.strictEqual(error.exitCode, 3)
      assert.strictEqual(
        error.message,
        "The action server in Fake sandbox box-1 exited with code 3 before it answered. Its last output:\n" +
          "booting\nError: no such plugin"
      )
    }))

  it.effect("the disconnect watch sees the sandbox gone with the driver's words; a failed pause is a RuntimePauseError", () =>
    Effect.gen(function*() {
      const { driver, boxes } = fakeProvider()
      const scope = yield* Scope.make()
      const box = yield* provisionHosted(contextOf(driver), noStatus).pipe(Scope.provide(scope))
      assert.isUndefined(yield* box.disconnect!.explain)
      boxes.get("box-1")!.tags.refusePause = "true"
      const paused = yield* Effect.flip(box.pause!)
      assert.strictEqual(paused._tag, "RuntimePauseError")
      assert.strictEqual((paused as { provider?: ProviderError }).provider?.reason, "not-found")
      boxes.clear()
      const watching = yield* Effect.forkChild(box.disconnect!.stopped)
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(watching)
      assert.deepStrictEqual(yield* box.disconnect!.explain, {
        outOfMemory: false,
        message: "Fake no longer has box-1"
      })
    }))

  it.effect("the reaper removes the sandboxes of a dead owner of this host, and no one else's", () =>
    Effect.gen(function*() {
      const { driver, boxes } = fakeProvider()
      const dead = String(spawnSync("true").pid)
      const tagged = (id: string, tags: Record<string, string>) =>
        boxes.set(id, { id, state: "paused", tags: { [TAGS.managed]: "true", [TAGS.keepAlive]: "false", ...tags } })
      tagged("orphan", { [TAGS.ownerHost]: hostname(), [TAGS.ownerPid]: dead })
      tagged("kept", { [TAGS.ownerHost]: hostname(), [TAGS.ownerPid]: dead, [TAGS.keepAlive]: "true" })
      tagged("live", { [TAGS.ownerHost]: hostname(), [TAGS.ownerPid]: String(process.pid) })
      tagged("elsewhere", { [TAGS.ownerHost]: `not-${hostname()}`, [TAGS.ownerPid]: dead })
      assert.deepStrictEqual(yield* reapOrphans("Fake", driver), ["orphan"])
      assert.deepStrictEqual([...boxes.keys()].sort(), ["elsewhere", "kept", "live"])
    }))
})

describe("ProviderCall", () => {
  const classify = (cause: unknown) => {
    const { status, retryAfter } = cause as { status: number; retryAfter?: number }
    return {
      reason: status === 429 ? "rate-limited" as const : status === 401 ? "unauthorized" as const : "unknown" as const,
      status,
      text: `HTTP ${status}`,
      ...(retryAfter === undefined ? {} : { retryAfter: Duration.seconds(retryAfter) })
    }
  }

  it.effect("waits out a rate limit at least its Retry-After, then answers", () =>
    Effect.gen(function*() {
      const call = makeProviderCall("Fake", classify, Schedule.spaced("1 second"))
      let attempts = 0
      const fiber = yield* Effect.forkChild(
        call("list sandboxes", () =>
          ++attempts < 3 ? Promise.reject({ status: 429, retryAfter: 30 }) : Promise.resolve("ok"))
      )
      yield* TestClock.adjust("31 seconds")
      assert.strictEqual(attempts, 2)
      yield* TestClock.adjust("31 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.strictEqual(attempts, 3)
    }))

  it.effect("does not retry what waiting cannot fix, and says who refused what, with the reason and status", () =>
    Effect.gen(function*() {
      const call = makeProviderCall("Fake", classify, Schedule.spaced("1 second"))
      let attempts = 0
      const error = yield* Effect.flip(call("create a sandbox", () => (++attempts, Promise.reject({ status: 401 }))))
      assert.strictEqual(attempts, 1)
      assert.deepStrictEqual(
        { reason: error.reason, status: error.status, message: error.message, operation: error.operation },
        {
          reason: "unauthorized",
          status: 401,
          message: "Fake could not create a sandbox: HTTP 401",
          operation: "create a sandbox"
        }
      )
    }))
})
