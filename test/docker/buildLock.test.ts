/**
 * The runtime image build lock (src/engines/docker/buildLock.ts): builders of one tag take turns,
 * builders of different tags do not wait for each other, and a lock left by a builder that died
 * is taken over instead of blocking every later start.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { lockDir, withBuildLock } from "../../src/engines/docker/buildLock.ts"

const tag = () => `effect-sandbox-runtime:test-${randomBytes(4).toString("hex")}`

/** A build that records when it ran. */
const build = (log: Array<string>, name: string) =>
  Effect.gen(function*() {
    log.push(`${name} start`)
    yield* Effect.sleep("300 millis")
    log.push(`${name} end`)
  })

describe("the runtime image build lock", () => {
  it.live("two builders of one tag take turns; builders of two tags overlap", () =>
    Effect.gen(function*() {
      const same: Array<string> = []
      const one = tag()
      yield* Effect.all([withBuildLock(one)(build(same, "a")), withBuildLock(one)(build(same, "b"))], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(same, ["a start", "a end", "b start", "b end"])

      const different: Array<string> = []
      yield* Effect.all([withBuildLock(tag())(build(different, "a")), withBuildLock(tag())(build(different, "b"))], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(different, ["a start", "b start", "a end", "b end"])
    }))

  it.live("a lock whose builder died is taken over, and released after the build", () =>
    Effect.gen(function*() {
      const t = tag()
      const dir = lockDir(t)
      // A process that has exited: its pid is free (or reused by a process that is not a builder).
      const dead = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).stdout.trim()
      mkdirSync(dir)
      writeFileSync(join(dir, "pid"), dead)
      const log: Array<string> = []
      yield* withBuildLock(t)(build(log, "a")).pipe(Effect.timeout("5 seconds"))
      assert.deepStrictEqual(log, ["a start", "a end"])
      assert.isFalse(existsSync(dir))
    }))
})
