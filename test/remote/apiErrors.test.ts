/**
 * A backend's refusal as the runtime API answers it (runtimeApi/errors.ts): a 500 with the
 * backend's message, the request's environment values masked in it (the engine quoted them).
 */
import { assert, describe, it } from "@effect/vitest"
import { ApiError, internalError } from "../../src/runtimeApi/errors.ts"

describe("internalError", () => {
  it("masks the given values of 6 characters or more, keeps short ones and the rest of the message", () => {
    const error = internalError(["s3cret-value", "1", "true"])({
      message: "invalid environment variable: =s3cret-value (1 of 1, true)"
    })
    assert.deepStrictEqual(
      error,
      new ApiError({ status: 500, detail: "invalid environment variable: =<redacted> (1 of 1, true)" })
    )
    assert.deepStrictEqual(
      internalError()({ message: "no such image" }),
      new ApiError({ status: 500, detail: "no such image" })
    )
  })
})
