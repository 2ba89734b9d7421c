/**
 * Bad layer options fail the layer with a one-line `InvalidOptionsError` before anything starts
 * (no shell, no server), the same on CliRuntime and LocalRuntime.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CliRuntime } from "../../src/layers/CliRuntime.ts"
import { LocalRuntime } from "../../src/layers/LocalRuntime.ts"
import type { Runtime } from "../../src/services/Runtime.ts"
import type { RuntimeOptions } from "../../src/services/RuntimeOptions.ts"

/** The options both layers share, by the same names. */
type Shared = RuntimeOptions

const layers = {
  CliRuntime: (options: Shared) => CliRuntime.layer(options),
  LocalRuntime: (options: Shared) => LocalRuntime.layer(options)
} as const

const startError = (layer: Layer.Layer<Runtime, { readonly _tag: string; readonly message: string }>) =>
  Effect.flip(Effect.scoped(Layer.build(layer))).pipe(Effect.map((error) => `${error._tag}: ${error.message}`))

const aFile = join(tmpdir(), `effect-sandbox-not-a-dir-${process.pid}`)
writeFileSync(aFile, "")

describe.each(Object.entries(layers))("%s options", (name, layer) => {
  it.effect("a negative no-change timeout", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(layer({ noChangeTimeoutSeconds: -1 })),
        `InvalidOptionsError: Invalid ${name} options: noChangeTimeoutSeconds: Expected a value greater than 0`
      )
    }))

  it.effect("a workspace under a regular file", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(layer({ workspace: join(aFile, "ws") })),
        `InvalidOptionsError: Invalid ${name} options: workspace: cannot create ${aFile}/ws (${aFile} is not a directory)`
      )
    }))

  it.effect("a workspace under /proc fails at once (Node's recursive mkdir spins there)", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(layer({ workspace: "/proc/effect-sandbox/ws" })),
        `InvalidOptionsError: Invalid ${name} options: workspace: cannot create /proc/effect-sandbox/ws (ENOENT)`
      )
    }), 5000)
})

describe("LocalRuntime.layerPool options", () => {
  // The pool checks its options once, when built: before the builder, it retried a doomed start every second.
  it.effect("a negative no-change timeout fails the pool layer, not each warm start", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(LocalRuntime.layerPool({ poolSize: 1, noChangeTimeoutSeconds: -1 })))
      )
      assert.strictEqual(
        `${error._tag}: ${error.message}`,
        "InvalidOptionsError: Invalid LocalRuntime options: noChangeTimeoutSeconds: Expected a value greater than 0"
      )
    }), 5000)

  // The same check as every hosted runtime's pool (provisioned.ts): a pool of none would keep layerWarm waiting.
  it.effect("a pool of no servers is refused, naming poolSize", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.scoped(Layer.build(LocalRuntime.layerPool({ poolSize: 0 }))))
      assert.strictEqual(
        `${error._tag}: ${error.message}`,
        "InvalidOptionsError: LocalRuntime options: poolSize must be 1 or more."
      )
    }), 5000)
})

describe("CliRuntime vscode", () => {
  // Swapping LocalRuntime for CliRuntime must not silently drop the IDE that was asked for.
  it.effect("is refused: there is no action server for VS Code to sit beside", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* startError(CliRuntime.layer({ vscode: true })),
        "InvalidOptionsError: Invalid CliRuntime options: vscode: VS Code runs beside an action server, which " +
          "CliRuntime does not start: use LocalRuntime (code-server on this machine) or DockerRuntime (the tools image)."
      )
    }))
})
