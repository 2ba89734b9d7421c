/**
 * The disconnect a runtime must report when its sandbox is ended from outside (killed through the
 * provider's API, shut down by its idle policy): the status stream reaches
 * `ERROR_RUNTIME_DISCONNECTED` within `within` (the providers' watches look every few seconds), and
 * the next action fails with a `RuntimeDisconnectedError` whose message names what happened.
 */
import { assert } from "@effect/vitest"
import { type Duration, Effect, Option, Stream } from "effect"
import { RuntimeDisconnectedError, type RuntimeShape } from "../src/index.ts"

export const expectDisconnected = (rt: RuntimeShape, reason: string, within: Duration.Input = "10 seconds") =>
  Effect.gen(function*() {
    const status = yield* rt.status.pipe(
      Stream.takeUntil((s) => s === "ERROR_RUNTIME_DISCONNECTED"),
      Stream.runLast,
      Effect.timeout(within)
    )
    assert.deepStrictEqual(status, Option.some("ERROR_RUNTIME_DISCONNECTED"))
    const error = yield* rt.runCommand("echo never").pipe(Effect.flip)
    assert.instanceOf(error, RuntimeDisconnectedError)
    assert.include(error.message, reason)
  })
