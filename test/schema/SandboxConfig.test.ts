import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { SandboxConfig, sandboxConfigFromEnv, sandboxEnvName } from "../../src/index.ts"

const fromEnv = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return yield* sandboxConfigFromEnv
  }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

describe("SandboxConfig", () => {
  it("has OpenHands' defaults (spec §15.1)", () => {
    const config = new SandboxConfig({})
    assert.strictEqual(config.timeout, 120)
    assert.strictEqual(config.baseContainerImage, "nikolaik/python-nodejs:python3.12-nodejs22")
    assert.strictEqual(config.keepRuntimeAlive, false)
    assert.deepStrictEqual(config.additionalNetworks, [])
    assert.deepStrictEqual(config.runtimeStartupEnvVars, {})
  })

  it("holds only the fields a runtime reads (OpenHands' others are left out, see docs/design-notes.md)", () => {
    assert.deepStrictEqual(Object.keys(SandboxConfig.fields).sort(), [
      "additionalNetworks",
      "baseContainerImage",
      "cudaVisibleDevices",
      "dockerRuntimeKwargs",
      "enableGpu",
      "forceRebuildRuntime",
      "keepRuntimeAlive",
      "runtimeContainerImage",
      "runtimeStartupEnvVars",
      "timeout",
      "useHostNetwork",
      "volumes"
    ])
  })

  it("names env vars SANDBOX_<UPPER_SNAKE>", () => {
    assert.strictEqual(sandboxEnvName("runtimeStartupEnvVars"), "SANDBOX_RUNTIME_STARTUP_ENV_VARS")
  })

  it.effect("reads SANDBOX_* variables of every kind", () =>
    Effect.gen(function*() {
      const config = yield* fromEnv({
        SANDBOX_TIMEOUT: "30",
        SANDBOX_KEEP_RUNTIME_ALIVE: "true",
        SANDBOX_VOLUMES: "/a:/b:ro",
        SANDBOX_ADDITIONAL_NETWORKS: "[\"n1\",\"n2\"]",
        SANDBOX_RUNTIME_STARTUP_ENV_VARS: "{\"A\":\"1\"}"
      })
      assert.strictEqual(config.timeout, 30)
      assert.strictEqual(config.keepRuntimeAlive, true)
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
