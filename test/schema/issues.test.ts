import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseVolumes } from "../../src/layers/docker/volumes.ts"
import { CmdRunAction } from "../../src/schema/Action.ts"
import { decodeOptions, invalidOptions } from "../../src/schema/issues.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"

/** Built as effects: `makeEffect` keeps the issue in the error channel (`new` throws, naming no field). */
const config = (input: ConstructorParameters<typeof SandboxConfig>[0]) =>
  Effect.mapError(SandboxConfig.makeEffect(input), (issue) => invalidOptions("SandboxConfig", issue))
const command = (input: ConstructorParameters<typeof CmdRunAction>[0]) =>
  Effect.mapError(CmdRunAction.makeEffect(input), (issue) => invalidOptions("CmdRunAction", issue))

/** The one-line message of an `InvalidOptionsError` (the test fails on success or another error). */
const messageOf = <A, E extends { readonly _tag: string; readonly message: string }>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect).pipe(Effect.map((error) => {
    assert.strictEqual(error._tag, "InvalidOptionsError")
    assert.notInclude(error.message, "\n")
    return error.message
  }))

describe("bad options are one-line typed errors", () => {
  it.effect("SandboxConfig({ timeout: -1 })", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageOf(config({ timeout: -1 })),
        "Invalid SandboxConfig: timeout: Expected a value greater than 0"
      )
      assert.throws(() => new SandboxConfig({ timeout: -1 }))
    }))

  it.effect("CmdRunAction({ timeout: 0 })", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageOf(command({ command: "ls", timeout: 0 })),
        "Invalid CmdRunAction: timeout: Expected a value greater than 0"
      )
    }))

  it.effect("a bad volumes string", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageOf(config({ volumes: "/data" })),
        "Invalid SandboxConfig: volumes: Expected host:container[:ro|rw] entries separated by commas"
      )
      assert.strictEqual(
        yield* messageOf(config({ volumes: "/a:/b:rx" })),
        "Invalid SandboxConfig: volumes: Expected host:container[:ro|rw] entries separated by commas"
      )
      const good = new SandboxConfig({ volumes: "/a/../b:/b:ro, volume:cache:/c, data:/d" }).volumes
      // Docker mounts what the schema accepted (`volume:<name>` used to become the volume "volume").
      assert.deepStrictEqual(parseVolumes(good), ["/b:/b:ro", "cache:/c:rw", "data:/d:rw"])
    }))

  it.effect("every bad field on one line, values not echoed", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageOf(
          decodeOptions(SandboxConfig, "SandboxConfig")({
            timeout: "soon",
            useHostNetwork: "yes",
            volumes: "/secret-looking-value"
          })
        ),
        "Invalid SandboxConfig: timeout: Expected number | undefined; useHostNetwork: Expected boolean | undefined;"
          + " volumes: Expected host:container[:ro|rw] entries separated by commas"
      )
    }))
})
