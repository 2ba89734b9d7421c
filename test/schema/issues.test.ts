import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseVolumes } from "../../src/engines/docker/volumes.ts"
import * as Action from "../../src/schema/Action.ts"
import { InvalidOptionsError } from "../../src/schema/errors.ts"
import { decodeOptions, invalidOptions } from "../../src/schema/issues.ts"
import { SandboxConfig } from "../../src/schema/SandboxConfig.ts"

/** Built as effects: `makeEffect` keeps the issue in the error channel (`new` throws it). */
const config = (input: ConstructorParameters<typeof SandboxConfig>[0]) =>
  Effect.mapError(SandboxConfig.makeEffect(input), (issue) => invalidOptions("SandboxConfig", issue))
const command = (input: ConstructorParameters<typeof Action.CmdRunAction>[0]) =>
  Effect.mapError(Action.CmdRunAction.makeEffect(input), (issue) => invalidOptions("CmdRunAction", issue))

/** The one-line message of an `InvalidOptionsError` (the test fails on success or another error). */
const messageOf = <A, E extends { readonly _tag: string; readonly message: string }>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect).pipe(Effect.map((error) => {
    assert.strictEqual(error._tag, "InvalidOptionsError")
    assert.notInclude(error.message, "\n")
    return error.message
  }))

/** What `make` throws: an `InvalidOptionsError`'s one line (the test fails on no throw or another error). */
const thrownBy = (make: () => unknown): string => {
  try {
    make()
  } catch (error) {
    assert.instanceOf(error, InvalidOptionsError)
    assert.notInclude(error.message, "\n")
    return error.message
  }
  return assert.fail("no error thrown")
}

describe("bad options are one-line typed errors", () => {
  it.effect("SandboxConfig({ timeout: -1 })", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* messageOf(config({ timeout: -1 })),
        "Invalid SandboxConfig: timeout: Expected a value greater than 0"
      )
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

  it("new of an action or SandboxConfig throws the same InvalidOptionsError, naming the field", () => {
    const expected = "Expected a value greater than 0"
    assert.strictEqual(
      thrownBy(() => new Action.CmdRunAction({ command: "ls", timeout: 0 })),
      `Invalid CmdRunAction: timeout: ${expected}`
    )
    assert.strictEqual(
      thrownBy(() => new SandboxConfig({ timeout: -1 })),
      `Invalid SandboxConfig: timeout: ${expected}`
    )
    assert.strictEqual(
      thrownBy(() => new SandboxConfig({ volumes: "/data" })),
      "Invalid SandboxConfig: volumes: Expected host:container[:ro|rw] entries separated by commas"
    )
    const actions = [
      () => new Action.IPythonRunCellAction({ code: "1", timeout: 0 }),
      () => new Action.FileReadAction({ path: "a", timeout: 0 }),
      () => new Action.FileWriteAction({ path: "a", content: "", timeout: 0 }),
      () => new Action.FileEditAction({ path: "a", command: "view", timeout: 0 }),
      () => new Action.BrowseURLAction({ url: "about:blank", timeout: 0 }),
      () => new Action.BrowseInteractiveAction({ browserActions: "noop()", timeout: 0 }),
      () => new Action.McpCallAction({ name: "tool", timeout: 0 })
    ]
    assert.deepStrictEqual(actions.map(thrownBy), [
      `Invalid IPythonRunCellAction: timeout: ${expected}`,
      `Invalid FileReadAction: timeout: ${expected}`,
      `Invalid FileWriteAction: timeout: ${expected}`,
      `Invalid FileEditAction: timeout: ${expected}`,
      `Invalid BrowseURLAction: timeout: ${expected}`,
      `Invalid BrowseInteractiveAction: timeout: ${expected}`,
      `Invalid McpCallAction: timeout: ${expected}`
    ])
    // A good one is built as before, and is still the class decoding gives.
    const good = new Action.FileWriteAction({ path: "a", content: "x", start: 2, timeout: 5 })
    assert.instanceOf(good, Action.FileWriteAction)
    assert.deepStrictEqual([good._tag, good.start, good.end, good.timeout], ["FileWriteAction", 2, -1, 5])
  })
})
