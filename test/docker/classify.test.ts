/**
 * What a failed Engine API call means (src/engines/docker/classify.ts): dockerode's `statusCode`
 * mapped to the contract's reasons, and a refused connection (no status) as the engine being away.
 */
import { assert, describe, it } from "@effect/vitest"
import { classifyDocker } from "../../src/engines/docker/classify.ts"

/** A dockerode error as it rejects: the engine's text, and its HTTP status. */
const engineError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode })

describe("classifyDocker", () => {
  const cases: ReadonlyArray<readonly [number, string]> = [
    [400, "invalid"],
    [401, "unauthorized"],
    [403, "forbidden"],
    [404, "not-found"],
    [409, "conflict"],
    [429, "rate-limited"],
    [500, "unknown"],
    [503, "unavailable"]
  ]
  for (const [status, reason] of cases) {
    it(`status ${status} is ${reason}`, () => {
      assert.deepStrictEqual(classifyDocker(engineError(status, "(HTTP code) the engine's text")), {
        reason,
        status,
        text: "(HTTP code) the engine's text"
      } as never)
    })
  }

  it("a refused connection has no status: the engine is unavailable", () => {
    const refused = Object.assign(new Error("connect ENOENT /var/run/docker.sock"), { code: "ENOENT" })
    assert.deepStrictEqual(classifyDocker(refused), {
      reason: "unavailable",
      status: undefined,
      text: "connect ENOENT /var/run/docker.sock"
    })
  })
})
