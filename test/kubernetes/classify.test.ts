/**
 * What a failed Kubernetes API request means (engines/kubernetes/apiCall.ts `classifyKube`): the API
 * server's status as a provider reason, a ResourceQuota's refusal as `quota`, and its own Status
 * message as the text, its Retry-After as the wait it asks for. client-node rejects with an
 * ApiException (`code`, `body`, `headers`), read by shape.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration } from "effect"
import { classifyKube } from "../../src/engines/kubernetes/apiCall.ts"
import type { ProviderReason } from "../../src/schema/errors.ts"

const apiException = (code: number, message: string) => ({
  code,
  body: JSON.stringify({ kind: "Status", status: "Failure", message, code })
})

describe("Kubernetes API failures as reasons", () => {
  it("reads the status and the API server's message", () => {
    const cases: ReadonlyArray<[number, string, ProviderReason]> = [
      [401, "Unauthorized", "unauthorized"],
      [403, `pods is forbidden: User "x" cannot create resource "pods"`, "forbidden"],
      [403, `pods "p" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=4, limited: cpu=4`, "quota"],
      [404, `pods "p" not found`, "not-found"],
      [409, `secrets "s" already exists`, "conflict"],
      [422, `Pod "P" is invalid: metadata.name: Invalid value`, "invalid"],
      [429, "Too many requests, please try again later.", "rate-limited"],
      [503, "the server is currently unable to handle the request", "unavailable"]
    ]
    for (const [status, message, reason] of cases) {
      assert.deepStrictEqual(classifyKube(apiException(status, message)), { reason, status, text: message })
    }
  })

  it("reads the API server's Retry-After (API Priority and Fairness sends one with a 429)", () => {
    assert.deepStrictEqual(
      classifyKube({ ...apiException(429, "Too many requests"), headers: { "retry-after": "3" } }),
      { reason: "rate-limited", status: 429, text: "Too many requests", retryAfter: Duration.seconds(3) }
    )
  })

  it("a failure without an answer is unknown, with its text", () => {
    assert.deepStrictEqual(classifyKube(new Error("connect ECONNREFUSED 127.0.0.1:6443")), {
      reason: "unknown",
      status: undefined,
      text: "connect ECONNREFUSED 127.0.0.1:6443"
    })
  })
})
