/**
 * What the Runloop driver makes of the SDK's failures, read structurally as the SDK throws them
 * (an `APIError` with `status`, `headers` and a message that starts with the status; a connection
 * error with none): the reason callers match on, the status, Runloop's text with what it means,
 * and a `Retry-After` to wait at least.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { classifyRunloop } from "../../../src/providers/runloop/classify.ts"

/**
 * An SDK `APIError` as the Stainless client makes it: its headers a plain record of lower-case names
 * behind a Proxy (core.js `createResponseHeaders`), not a Fetch `Headers` (no `get`).
 */
const apiError = (status: number, text: string, headers: Record<string, string> = {}) =>
  Object.assign(new Error(`${status} ${text}`), {
    status,
    headers: new Proxy({ ...headers } as Record<string, string>, {
      get: (target, name) => target[String(name).toLowerCase()] ?? target[String(name)]
    })
  })

describe("classifyRunloop", () => {
  it("maps Runloop's statuses to reasons, with the status", () => {
    const cases: ReadonlyArray<readonly [number, string, string]> = [
      [400, "bad request", "invalid"],
      [401, "Invalid API key", "unauthorized"],
      [402, "Payment required", "quota"],
      [403, "Maximum number of running devboxes (10) reached", "quota"],
      [403, "Not allowed", "forbidden"],
      [404, "Blueprint with name x not found", "image-missing"],
      [404, "Devbox dbx_1 not found", "not-found"],
      // What the SDK would retry itself (its retries are off: ours must cover them).
      [408, "timed out", "unavailable"],
      [409, "in progress", "transition"],
      [500, "Internal server error", "unavailable"],
      [429, "Too many requests", "rate-limited"],
      [503, "Service unavailable", "unavailable"],
      [418, "teapot", "unknown"]
    ]
    for (const [status, text, reason] of cases) {
      const classified = classifyRunloop(apiError(status, text))
      assert.deepStrictEqual([classified.reason, classified.status], [reason, status], `${status} ${text}`)
    }
  })

  it("keeps Runloop's text and says what an unusable key, the quota and a lasting rate limit mean", () => {
    assert.strictEqual(
      classifyRunloop(apiError(401, "Invalid API key")).text,
      "401 Invalid API key (Runloop refused the API key: check RUNLOOP_API_KEY or the `apiKey` option)"
    )
    assert.strictEqual(
      classifyRunloop(apiError(402, "Payment required")).text,
      "402 Payment required (the account's quota or plan refuses it: shut down devboxes or raise the limits)"
    )
    assert.strictEqual(
      classifyRunloop(apiError(429, "Too many requests")).text,
      "429 Too many requests (Runloop's rate limit: still refused after retrying with backoff)"
    )
    assert.strictEqual(classifyRunloop(apiError(404, "Devbox dbx_1 not found")).text, "404 Devbox dbx_1 not found")
  })

  it("reads Retry-After in seconds, and none where there is none", () => {
    const limited = classifyRunloop(apiError(429, "Too many requests", { "retry-after": "7" }))
    assert.isTrue(limited.retryAfter !== undefined && Duration.equals(limited.retryAfter, Duration.seconds(7)))
    assert.isUndefined(classifyRunloop(apiError(429, "Too many requests")).retryAfter)
    assert.isUndefined(classifyRunloop(apiError(429, "Too many requests", { "retry-after": "soon" })).retryAfter)
  })

  it("takes an answer Runloop marks `x-should-retry: true` for one worth waiting out, as the SDK would", () => {
    assert.strictEqual(classifyRunloop(apiError(400, "try again", { "x-should-retry": "true" })).reason, "unavailable")
    assert.strictEqual(classifyRunloop(apiError(400, "bad request", { "x-should-retry": "false" })).reason, "invalid")
  })

  it("takes a failure without a status (no connection) for Runloop unavailable, worth waiting out", () => {
    const classified = classifyRunloop(new Error("Connection error."))
    assert.deepStrictEqual([classified.reason, classified.status, classified.text], [
      "unavailable",
      undefined,
      "Connection error."
    ])
    assert.strictEqual(classifyRunloop("boom").reason, "unavailable")
  })
})
