/**
 * Where added variables are written (executor/envDir.ts): an executor that owns its state puts
 * the env file on the memory-backed /dev/shm (a container's writable layer would keep secrets),
 * in a private directory removed with it; a state directory an owner gave keeps it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { existsSync, mkdtempSync, rmSync, statfsSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { envFileDir } from "../../src/executor/envDir.ts"

describe("envFileDir", () => {
  it.effect("own state: a private directory on the /dev/shm tmpfs, gone with the scope; given state: that directory", () =>
    Effect.gen(function*() {
      // CI's Linux machines have the tmpfs; without it there is nothing to test here.
      assert.strictEqual(statfsSync("/dev/shm").type, 0x01021994, "/dev/shm is not a tmpfs on this machine")
      const state = mkdtempSync(join(tmpdir(), "env-dir-"))
      const scope = yield* Scope.make()
      const own = yield* envFileDir(state, true).pipe(Scope.provide(scope))
      assert.match(own, /^\/dev\/shm\/effect-sandbox-env-\w{6}$/)
      assert.strictEqual(statSync(own).mode & 0o777, 0o700)
      assert.strictEqual(dirname(own), "/dev/shm")
      const given = yield* envFileDir(state, false).pipe(Scope.provide(scope))
      assert.strictEqual(given, state)
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(existsSync(own))
      assert.isTrue(existsSync(state))
      rmSync(state, { recursive: true })
    }))
})
