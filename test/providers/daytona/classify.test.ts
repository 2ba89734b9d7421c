/**
 * What a failed Daytona SDK call means (src/providers/daytona/classify.ts), on the SDK's own error
 * classes: the reason from the status, told apart where Daytona answers one status for several
 * (its quota is a 403, a missing snapshot a 404), the advice added to Daytona's text, and the
 * `Retry-After` a 429 carries.
 */
import { DaytonaError } from "@daytonaio/sdk"
import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { classifyDaytona } from "../../../src/providers/daytona/classify.ts"

/** The SDK's error for a response (its headers read as the SDK's AxiosHeaders are, by `get`). */
const answered = (status: number, message: string, headers: Record<string, string> = {}) => {
  const read = { get: (name: string) => headers[name.toLowerCase()] }
  return classifyDaytona(new DaytonaError(message, status, read as unknown as DaytonaError["headers"]))
}

describe("classifyDaytona", () => {
  it("a refused key is unauthorized, with what to check", () => {
    const classified = answered(401, "Invalid API key")
    assert.strictEqual(classified.reason, "unauthorized")
    assert.strictEqual(classified.status, 401)
    assert.strictEqual(
      classified.text,
      "Invalid API key (Daytona refused the API key: check DAYTONA_API_KEY or the `apiKey` option)"
    )
  })

  it("a 403 naming a limit is the quota; another 403 is forbidden, Daytona's text alone", () => {
    assert.strictEqual(answered(403, "Total memory limit exceeded. Maximum allowed: 8GiB").reason, "quota")
    const forbidden = answered(403, "Forbidden resource")
    assert.strictEqual(forbidden.reason, "forbidden")
    assert.strictEqual(forbidden.text, "Forbidden resource")
  })

  it("a missing snapshot is image-missing; another 404 is not-found", () => {
    assert.strictEqual(answered(404, "Snapshot effect-sandbox-runtime not found").reason, "image-missing")
    assert.strictEqual(answered(400, "Snapshot x not found").reason, "image-missing")
    assert.strictEqual(answered(404, "Sandbox with ID or name abc not found").reason, "not-found")
  })

  it("a 429 is rate-limited with its Retry-After; without one, none", () => {
    const limited = answered(429, "ThrottlerException: Too Many Requests", { "retry-after": "7" })
    assert.strictEqual(limited.reason, "rate-limited")
    assert.deepStrictEqual(limited.retryAfter, Duration.seconds(7))
    assert.isUndefined(answered(429, "ThrottlerException: Too Many Requests").retryAfter)
  })

  it("a 503 is unavailable, a 409 a transition, a failure without a status unknown", () => {
    assert.strictEqual(answered(503, "Service Unavailable").reason, "unavailable")
    assert.strictEqual(answered(409, "Sandbox state change in progress").reason, "transition")
    const unknown = classifyDaytona(new Error("socket hang up"))
    assert.deepStrictEqual([unknown.reason, unknown.status, unknown.text], ["unknown", undefined, "socket hang up"])
  })

  it("a name already taken is a conflict, not a transition to wait out, with what it means", () => {
    const taken = answered(409, "Sandbox with name effect-sandbox-0123 already exists")
    assert.strictEqual(taken.reason, "conflict")
    assert.strictEqual(
      taken.text,
      "Sandbox with name effect-sandbox-0123 already exists (another runtime made this session's sandbox at the " +
        "same time: attach to it instead)"
    )
  })
})
