/**
 * Removal in finalizers (executor/cleanup.ts): a tree is removed without blocking; a path that
 * cannot be removed is a typed RemoveError with a one-line message, and in a finalizer a logged
 * warning, not a defect that would replace the scope's own outcome.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Logger, References, Scope } from "effect"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RemoveError, removeInFinalizer, removePath } from "../../src/executor/cleanup.ts"

/** A path no file system accepts (a NUL byte): its removal fails whoever runs the test, root included. */
const UNREMOVABLE = join(tmpdir(), "cleanup-\0-test")

describe("cleanup", () => {
  it.effect("removePath removes a tree, and a path already gone", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "cleanup-"))
      mkdirSync(join(dir, "a", "b"), { recursive: true })
      writeFileSync(join(dir, "a", "b", "file.txt"), "x")
      yield* removePath(dir)
      assert.isFalse(existsSync(dir))
      yield* removePath(dir)
    }))

  it.effect("a path that cannot be removed is a RemoveError with a one-line message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(removePath(UNREMOVABLE))
      assert.instanceOf(error, RemoveError)
      assert.strictEqual(error.path, UNREMOVABLE)
      assert.match(error.message, /^Cannot remove .*cleanup-/)
      assert.notInclude(error.message, "\n")
    }))

  it.effect("in a finalizer the failure is a warning, and the scope closes with its own exit", () =>
    Effect.gen(function*() {
      const logged: Array<string> = []
      const logger = Logger.make((options) => void logged.push(`${options.logLevel} ${String(options.message)}`))
      const scope = yield* Scope.make()
      yield* Scope.addFinalizer(scope, removeInFinalizer(UNREMOVABLE))
      const closed = yield* Scope.close(scope, Exit.void).pipe(
        Effect.exit,
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      assert.isTrue(Exit.isSuccess(closed))
      assert.strictEqual(logged.length, 1)
      assert.match(logged[0]!, /^Warn .*Cannot remove .*cleanup-/)
    }))
})
