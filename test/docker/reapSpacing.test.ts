/**
 * How a process's DockerRuntime layers share reaper passes over one engine (`reapUnlessCovered`):
 * a layer alone passes at each of its turns, a pass another layer began since covers a turn, and
 * images are looked at on the first pass and then once `IMAGE_PASS_EVERY` has gone by. The pass is
 * a recording stand-in and the clock is TestClock's: no engine needed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { IMAGE_PASS_EVERY, reapUnlessCovered } from "../../src/providers/docker/reaper.ts"

/** The scopes of the passes run, in order; each test has an engine address of its own. */
const recorder = () => {
  const passes: Array<string> = []
  const address = `unix:///test/${randomUUID()}.sock`
  const layer = (name: string) =>
    reapUnlessCovered(address, ({ images }) => Effect.sync(() => passes.push(`${name}${images ? "+images" : ""}`)))
  return { passes, layer }
}

describe("reapUnlessCovered", () => {
  it.effect("a layer alone passes at every turn, and looks at images on its first and then every IMAGE_PASS_EVERY", () =>
    Effect.gen(function*() {
      const { passes, layer } = recorder()
      const turn = yield* layer("a")
      yield* turn
      for (let n = 0; n < 10; n++) {
        yield* TestClock.adjust("30 seconds")
        yield* turn
      }
      assert.deepStrictEqual(passes, ["a+images", ...Array(9).fill("a"), "a+images"])
      assert.strictEqual(Duration.toMinutes(IMAGE_PASS_EVERY), 5)
    }))

  it.effect("a pass another layer began since a layer's previous turn (or its making) covers that turn", () =>
    Effect.gen(function*() {
      const { passes, layer } = recorder()
      const a = yield* layer("a")
      const b = yield* layer("b")
      yield* a
      yield* b
      yield* b
      yield* a
      yield* a
      // A layer made after a pass began is not covered by it: its sandbox came later.
      const c = yield* layer("c")
      yield* c
      assert.deepStrictEqual(passes, ["a+images", "b", "a", "c"])
    }))
})
