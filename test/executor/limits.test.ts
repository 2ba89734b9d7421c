import { assert, describe, it } from "@effect/vitest"
import { DEFAULT_LIMITS, isOverLimit, limitsFromEnv, overLimit } from "../../src/executor/limits.ts"
import { jsonShapeProblem } from "../../src/server/jsonShape.ts"

describe("limitsFromEnv", () => {
  it("takes each EFFECT_SANDBOX_MAX_* that is set, the defaults otherwise", () => {
    const limits = limitsFromEnv({ EFFECT_SANDBOX_MAX_DOWNLOAD_BYTES: "1000", EFFECT_SANDBOX_MAX_ZIP_RATIO: "" })
    assert.deepStrictEqual(limits, { ...DEFAULT_LIMITS, downloadBytes: 1000 })
  })

  it("refuses a value that is not a positive integer, naming the variable", () => {
    assert.throws(
      () => limitsFromEnv({ EFFECT_SANDBOX_MAX_UPLOAD_BYTES: "1e3x" }),
      "EFFECT_SANDBOX_MAX_UPLOAD_BYTES must be a positive integer, not \"1e3x\""
    )
    assert.throws(() => limitsFromEnv({ EFFECT_SANDBOX_MAX_JSON_DEPTH: "0" }), "EFFECT_SANDBOX_MAX_JSON_DEPTH")
  })

  it("says a refusal so that the server can tell it from other failures", () => {
    const message = overLimit("The download of /", "download", 10, "bytes")
    assert.strictEqual(message, "The download of / exceeds the download limit of 10 bytes")
    assert.isTrue(isOverLimit(message))
    assert.isFalse(isOverLimit("File not found: /x"))
  })
})

const bytes = (text: string) => new TextEncoder().encode(text)

describe("jsonShapeProblem", () => {
  const limits = { depth: 3, containers: 4 }

  it("counts depth and containers outside strings only (escaped quotes included)", () => {
    assert.isUndefined(jsonShapeProblem(bytes(`{"a":[[1]],"s":"[[[[{{{{\\"[[[["}`), limits))
    assert.strictEqual(
      jsonShapeProblem(bytes(`[[[[]]]]`), limits),
      "The JSON body is nested deeper than the limit of 3 levels."
    )
    assert.strictEqual(
      jsonShapeProblem(bytes(`[[],[],[],[]]`), limits),
      "The JSON body has more objects and arrays than the limit of 4."
    )
  })
})
