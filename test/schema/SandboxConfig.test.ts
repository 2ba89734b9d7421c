import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { SandboxConfig, sandboxConfigFromEnv, sandboxEnvName } from "../../src/index.ts"

const fromEnv = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return yield* sandboxConfigFromEnv
  }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

describe("SandboxConfig", () => {
  it("has OpenHands' defaults (spec §15.1)", () => {
    const config = new SandboxConfig({})
    assert.strictEqual(config.timeout, 120)
    assert.strictEqual(config.remoteRuntimeApiUrl, "http://localhost:8000")
    assert.strictEqual(config.baseContainerImage, "nikolaik/python-nodejs:python3.12-nodejs22")
    assert.strictEqual(config.closeDelay, 3600)
    assert.strictEqual(config.pauseClosedRuntimes, true)
    assert.deepStrictEqual(config.additionalNetworks, [])
    assert.isNull(config.apiKey)
  })

  it("names env vars SANDBOX_<UPPER_SNAKE>", () => {
    assert.strictEqual(sandboxEnvName("remoteRuntimeApiUrl"), "SANDBOX_REMOTE_RUNTIME_API_URL")
  })

  it.effect("reads SANDBOX_* variables of every kind", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv({
        SANDBOX_TIMEOUT: "30",
        SANDBOX_KEEP_RUNTIME_ALIVE: "true",
        SANDBOX_API_KEY: "k-123",
        SANDBOX_VOLUMES: "/a:/b:ro",
        SANDBOX_ADDITIONAL_NETWORKS: "[\"n1\",\"n2\"]",
        SANDBOX_RUNTIME_STARTUP_ENV_VARS: "{\"A\":\"1\"}"
      })
      assert.strictEqual(config.timeout, 30)
      assert.strictEqual(config.keepRuntimeAlive, true)
      assert.strictEqual(Redacted.value(config.apiKey!), "k-123")
      assert.strictEqual(String(config.apiKey), "<redacted>")
      assert.strictEqual(config.volumes, "/a:/b:ro")
      assert.deepStrictEqual(config.additionalNetworks, ["n1", "n2"])
      assert.deepStrictEqual(config.runtimeStartupEnvVars, { A: "1" })
      assert.strictEqual(config.enableGpu, false)
    }))

  it.effect("fails with a clear error on a wrong type", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(fromEnv({ SANDBOX_TIMEOUT: "soon" }))
      assert.include(error.message, "SANDBOX_TIMEOUT")
    }))

  it.effect("names every bad SANDBOX_* variable and its rule on one line", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(fromEnv({ SANDBOX_TIMEOUT: "-1", SANDBOX_VOLUMES: "/data" }))
      assert.strictEqual(
        error.message,
        "SourceError: Invalid SANDBOX_* variables: SANDBOX_TIMEOUT: Expected a value greater than 0;"
          + " SANDBOX_VOLUMES: Expected host:container[:ro|rw] entries separated by commas"
      )
    }))
})
