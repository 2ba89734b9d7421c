/**
 * A secret too short to mask safely is refused, naming the variable and never its value: masking
 * a one-letter secret replaced that letter everywhere in the output.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeActionExecutor } from "../../src/executor/ActionExecutor.ts"
import { CliRuntime } from "../../src/layers/CliRuntime.ts"
import { Runtime } from "../../src/services/Runtime.ts"

const refusal = (names: string) =>
  `InvalidEnvVarError: Secrets too short to mask safely: ${names} (at least 4 characters;`
  + " masking a shorter value would hide those characters everywhere in the output). Nothing was set."

describe("secrets shorter than 4 characters", () => {
  it.live(
    "addEnvVars refuses them with a typed error naming the variables; nothing is set or masked",
    () =>
      Effect.gen(function*() {
        const rt = yield* Runtime
        const error = yield* Effect.flip(
          rt.addEnvVars({ PIN: Redacted.make("e"), CODE: Redacted.make("abc"), OK: Redacted.make("long-enough") })
        )
        assert.deepStrictEqual("names" in error ? error.names : [], ["PIN", "CODE"])
        assert.strictEqual(`${error._tag}: ${error.message}`, refusal("PIN, CODE"))
        const shown = yield* rt.runCommand("echo \"hello [$PIN] [$OK]\"")
        assert.strictEqual(shown.content, "hello [] []")
        yield* rt.addEnvVars({ KEY: Redacted.make("abcd") })
        assert.strictEqual((yield* rt.runCommand("echo \"$KEY abc\"")).content, "<redacted> abc")
      }).pipe(Effect.provide(CliRuntime.layer())),
    30_000
  )

  it.live(
    "the executor refuses them too (the action server's POST /v1/env reaches it directly)",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const executor = yield* makeActionExecutor({
          workspace: mkdtempSync(join(tmpdir(), "effect-sandbox-short-secret-")),
          restrictToWorkspace: true,
          noChangeTimeoutSeconds: 10,
          sessionMarker: "short-secret"
        })
        const error = yield* Effect.flip(executor.setEnv({ PIN: "e", PLAIN: "x" }, ["PIN"]))
        assert.strictEqual(`${error._tag}: ${error.message}`, refusal("PIN"))
        yield* executor.setEnv({ PLAIN: "x" }, [])
      })),
    30_000
  )
})
