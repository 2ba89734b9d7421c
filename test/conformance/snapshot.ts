/**
 * Snapshot and fork (docs/snapshots.md): where a runtime offers them, a fork's copies start from
 * the files written before it and then each goes its own way. Where it does not, the lifecycle's
 * capabilities case checks that both are refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { withRuntime } from "./helpers.ts"
import type { ConformanceTarget } from "./target.ts"

export const snapshotConformance = (target: ConformanceTarget) =>
  describe("snapshot and fork", () => {
    it.live.skipIf(!target.capabilities.snapshot)(
      "a fork's copies start from the same files, then diverge independently",
      () =>
        withRuntime(target, (rt) =>
          Effect.scoped(Effect.gen(function*() {
            yield* rt.write({ path: `${rt.info.workspace}/start.txt`, content: "the starting state" })
            const [a, b] = yield* rt.fork(2)
            for (const copy of [a!, b!]) {
              assert.strictEqual((yield* copy.runCommand("cat start.txt")).content, "the starting state")
            }
            yield* a!.runCommand("echo a > start.txt && touch only-a")
            yield* b!.runCommand("echo b > start.txt")
            assert.strictEqual((yield* a!.runCommand("cat start.txt; ls only-a")).content, "a\nonly-a")
            assert.strictEqual(
              (yield* b!.runCommand("cat start.txt; ls only-a 2>&1 >/dev/null | wc -l")).content,
              "b\n1"
            )
            assert.strictEqual((yield* rt.runCommand("cat start.txt")).content, "the starting state")
          }))),
      120_000
    )
  })
