/**
 * An E2B control-plane request whose abort never reaches Node's fetch (nodejs/node#55428) still
 * ends at its time-out, with the SDK's own TimeoutError, which the driver reads as `timeout`.
 */
import { assert, describe, it } from "@effect/vitest"
import { classifyE2B } from "../../../src/providers/e2b/classify.ts"
import { withinRequestTimeout } from "../../../src/providers/e2b/requestDeadline.ts"

describe("an E2B request's own deadline", () => {
  it("fails a request that never settles with the SDK's TimeoutError, read as a time-out", async () => {
    const error = await withinRequestTimeout(10, () => new Promise<never>(() => {})).then(
      () => assert.fail("a request that never settles resolved"),
      (cause: unknown) => cause
    )
    assert.instanceOf(error, DOMException)
    assert.strictEqual((error as DOMException).name, "TimeoutError")
    assert.strictEqual((error as DOMException).message, "The operation was aborted due to timeout")
    assert.deepStrictEqual(classifyE2B(error), {
      reason: "timeout",
      status: undefined,
      text: "The operation was aborted due to timeout"
    })
  })

  it("passes on what the request settles with, before its time-out", async () => {
    assert.strictEqual(await withinRequestTimeout(60_000, () => Promise.resolve("made")), "made")
    const refused = new Error("409: sandbox is pausing")
    const error = await withinRequestTimeout(60_000, () => Promise.reject(refused)).catch((cause: unknown) => cause)
    assert.strictEqual(error, refused)
  })
})
