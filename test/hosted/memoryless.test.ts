/**
 * The hosted runtime's part in a driver whose pause keeps no memory and whose sandboxes live by a
 * provider's clock (Runloop's suspend and idle policy), over an in-memory driver with the TestClock:
 * a resume launches the server again (on the runtime and on attach), a kept-alive sandbox is still
 * renewed while a runtime uses it and no longer once released, and an attach to a running sandbox
 * asks the driver where its workspace is.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { TestClock } from "effect/testing"
import { provisionHosted } from "../../src/hosted/provisioner.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"
import type { Driver, Found } from "../../src/services/Driver.ts"

interface Box {
  readonly id: string
  state: "running" | "paused"
  readonly tags: Record<string, string>
}

/** A provider of memoryless pauses, recording every verb it is asked for. */
const memorylessProvider = () => {
  const calls: Array<string> = []
  const boxes = new Map<string, Box>()
  const record = (call: string) => Effect.sync(() => void calls.push(call))
  const driver: Driver<Box> = {
    user: { name: "user", id: 1000 },
    create: (spec) =>
      Effect.sync(() => {
        const box: Box = { id: `box-${boxes.size + 1}`, state: "running", tags: { ...spec.tags } }
        boxes.set(box.id, box)
        return { sandbox: box, id: box.id }
      }),
    launch: (box) => Effect.as(record(`launch ${box.id}`), { workspace: "/home/user/workspace" }),
    destroy: (box) => Effect.sync(() => void boxes.delete(box.id)),
    find: (tags) =>
      Effect.sync(() =>
        [...boxes.values()]
          .filter((box) => Object.entries(tags).every(([k, v]) => box.tags[k] === v))
          .map((box): Found<Box> => ({ sandbox: box, id: box.id, tags: box.tags, state: box.state }))
      ),
    state: (box) => Effect.sync(() => ({ _tag: box.state })),
    endpoint: (box, port) => Effect.succeed({ url: `http://${box.id}:${port}` }),
    workspace: (box) => Effect.as(record(`workspace ${box.id}`), "/home/user/workspace"),
    keepAlive: { every: "10 seconds", touch: (box) => record(`touch ${box.id}`) },
    pause: {
      keepsMemory: false,
      relaunch: true,
      pause: (box) => Effect.andThen(record(`pause ${box.id}`), Effect.sync(() => box.state = "paused")),
      resume: (box) => Effect.andThen(record(`resume ${box.id}`), Effect.sync(() => box.state = "running"))
    }
  }
  return { driver, boxes, calls }
}

const contextOf = (driver: Driver<Box>, sessionId: string, keepAlive: boolean) => ({
  provider: "Fake",
  noun: "sandbox",
  kind: "fake",
  driver,
  options: { sessionId },
  sandbox: new SandboxConfig({ keepRuntimeAlive: keepAlive }),
  attachOnly: false
})

const noStatus = () => Effect.void

describe("the hosted runtime over a driver whose pause keeps no memory", () => {
  it.effect("resume launches the server again; attach to a paused sandbox resumes and launches it", () =>
    Effect.gen(function*() {
      const { calls, driver } = memorylessProvider()
      const first = yield* Scope.make()
      const box = yield* provisionHosted(contextOf(driver, "m-1", true), noStatus).pipe(Scope.provide(first))
      yield* box.pause!
      yield* box.resume!
      assert.deepStrictEqual(calls, ["launch box-1", "pause box-1", "resume box-1", "launch box-1"])
      yield* box.pause!
      yield* Scope.close(first, Exit.void)
      const attached = yield* provisionHosted(contextOf(driver, "m-1", false), noStatus).pipe(Effect.scoped)
      assert.deepStrictEqual(calls.slice(-2), ["resume box-1", "launch box-1"])
      // Launched anew: its start failure is raced again, its workspace the launch's.
      assert.strictEqual(attached.workspace, "/home/user/workspace")
    }))

  it.effect("a kept-alive sandbox is renewed while its runtime lives, and no longer once released", () =>
    Effect.gen(function*() {
      const { calls, driver } = memorylessProvider()
      const scope = yield* Scope.make()
      yield* provisionHosted(contextOf(driver, "m-2", true), noStatus).pipe(Scope.provide(scope))
      yield* TestClock.adjust("25 seconds")
      assert.strictEqual(calls.filter((call) => call.startsWith("touch")).length, 2)
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(calls.filter((call) => call.startsWith("touch")).length, 2)
    }))

  it.effect("an attach to a running sandbox asks the driver for its workspace, and launches nothing", () =>
    Effect.gen(function*() {
      const { calls, driver } = memorylessProvider()
      yield* provisionHosted(contextOf(driver, "m-3", true), noStatus).pipe(Effect.scoped)
      const attached = yield* provisionHosted(contextOf(driver, "m-3", false), noStatus).pipe(Effect.scoped)
      assert.strictEqual(attached.workspace, "/home/user/workspace")
      assert.deepStrictEqual(calls, ["launch box-1", "workspace box-1"])
    }))
})
