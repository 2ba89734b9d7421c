import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import { join } from "node:path"
import { DEFAULT_LIMITS, type TransferLimits } from "../../src/executor/limits.ts"
import { extractZip } from "../../src/executor/unzip.ts"
import { walkTree, writeZip } from "../../src/executor/zip.ts"
import { makeZip, stored, zeros } from "./zipFixtures.ts"

/** A temp dir with `dest/` (the extraction's destination) and `outside/` beside it; removed after. */
const sandbox = Effect.acquireRelease(
  Effect.sync(() => {
    const root = fs.realpathSync(fs.mkdtempSync(join(os.tmpdir(), "zip-test-")))
    fs.mkdirSync(join(root, "dest"))
    fs.mkdirSync(join(root, "outside"))
    return { root, dest: join(root, "dest"), outside: join(root, "outside"), zip: join(root, "in.zip") }
  }),
  ({ root }) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
)

/** Extract and return the refusal's message (the test fails if it succeeds). */
const refusal = (zip: string, dest: string, limits: TransferLimits = DEFAULT_LIMITS) =>
  extractZip(zip, dest, limits).pipe(
    Effect.exit,
    Effect.map((exit) => {
      if (Exit.isSuccess(exit)) return assert.fail("the zip was extracted")
      const error = exit.cause.reasons.find((r) => r._tag === "Fail")
      assert.isDefined(error, `a typed failure, got ${String(exit.cause)}`)
      return (error as { error: { _tag: string; message: string } }).error
    })
  )

const listing = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort()

describe("extractZip", () => {
  it.effect("refuses a 1 GiB zip bomb at once, with memory flat and nothing written", () =>
    Effect.gen(function*() {
      const { dest, zip } = yield* sandbox
      const bomb = zeros(16)
      fs.writeFileSync(zip, makeZip([{ name: "bomb.bin", method: 8, ...bomb }]))
      assert.isBelow(fs.statSync(zip).size, 1024 * 1024)
      const rss = process.memoryUsage().rss
      const started = Date.now()
      const error = yield* refusal(zip, dest)
      assert.strictEqual(error._tag, "TransferError")
      assert.include(error.message, "exceeds the compression ratio limit of 100 to 1")
      assert.isBelow(Date.now() - started, 2000)
      assert.isBelow(process.memoryUsage().rss - rss, 50 * 1024 * 1024)
      assert.deepStrictEqual(listing(dest), [])
    }))

  it.effect("refuses a zip over the expanded size limit, naming it", () =>
    Effect.gen(function*() {
      const { dest, zip } = yield* sandbox
      fs.writeFileSync(zip, makeZip([stored("a.txt", "x".repeat(2000))]))
      const error = yield* refusal(zip, dest, { ...DEFAULT_LIMITS, zipExpandedBytes: 1000 })
      assert.include(error.message, "exceeds the expanded size limit of 1000 bytes")
      assert.deepStrictEqual(listing(dest), [])
    }))

  it.effect("refuses an entry that inflates past the size it declares, memory flat, nothing left", () =>
    Effect.gen(function*() {
      const { dest, zip } = yield* sandbox
      const bomb = zeros(8)
      // Declares 1 KiB, inflates to 512 MiB: the headers pass, the inflation is cut short.
      fs.writeFileSync(zip, makeZip([stored("first.txt", "ok"), { name: "liar.bin", method: 8, ...bomb, size: 1024 }]))
      const rss = process.memoryUsage().rss
      const started = Date.now()
      const error = yield* refusal(zip, dest)
      assert.include(error.message, "liar.bin")
      assert.isBelow(Date.now() - started, 3000)
      assert.isBelow(process.memoryUsage().rss - rss, 50 * 1024 * 1024)
      assert.deepStrictEqual(listing(dest), [], "not even first.txt, and no staging directory")
    }))

  it.effect("refuses a zip with more entries than the limit before reading them", () =>
    Effect.gen(function*() {
      const { dest, zip } = yield* sandbox
      fs.writeFileSync(zip, makeZip(Array.from({ length: 11 }, (_, i) => stored(`f${i}`, ""))))
      const error = yield* refusal(zip, dest, { ...DEFAULT_LIMITS, zipEntries: 10 })
      assert.strictEqual(error.message, "The zip's 11 entries exceeds the entry count limit of 10 entries")
      assert.deepStrictEqual(listing(dest), [])
    }))

  it.effect("refuses an entry through a symlinked directory in the destination; nothing written anywhere", () =>
    Effect.gen(function*() {
      const { dest, outside, zip } = yield* sandbox
      fs.symlinkSync(outside, join(dest, "link"))
      fs.writeFileSync(zip, makeZip([stored("ok.txt", "fine"), stored("link/evil.txt", "pwned")]))
      const error = yield* refusal(zip, dest)
      assert.strictEqual(
        error.message,
        "Zip entry \"link/evil.txt\" goes through the symbolic link link in the destination; refused"
      )
      assert.deepStrictEqual(listing(outside), [])
      assert.deepStrictEqual(listing(dest), ["link"])
    }))

  it.effect("refuses an entry onto or through a dangling link; its target is never created", () =>
    Effect.gen(function*() {
      const { dest, outside, zip } = yield* sandbox
      fs.symlinkSync(join(outside, "new.txt"), join(dest, "dangling"))
      fs.writeFileSync(zip, makeZip([stored("dangling", "pwned")]))
      const onto = yield* refusal(zip, dest)
      assert.include(onto.message, "would replace the symbolic link dangling")
      fs.writeFileSync(zip, makeZip([stored("dangling/x.txt", "pwned")]))
      const through = yield* refusal(zip, dest)
      assert.include(through.message, "goes through the symbolic link dangling")
      assert.deepStrictEqual(listing(outside), [])
    }))

  it.effect("a link entry becomes a plain file, so a later entry cannot go through it", () =>
    Effect.gen(function*() {
      const { dest, outside, zip } = yield* sandbox
      fs.writeFileSync(zip, makeZip([stored("l", outside, 0o120777), stored("l/x.txt", "pwned")]))
      const error = yield* refusal(zip, dest)
      assert.include(error.message, "needs l to be a directory, but it is a file")
      assert.deepStrictEqual(listing(outside), [])
      assert.deepStrictEqual(listing(dest), [])
      fs.writeFileSync(zip, makeZip([stored("l", outside, 0o120777)]))
      yield* extractZip(zip, dest, DEFAULT_LIMITS)
      assert.isTrue(fs.lstatSync(join(dest, "l")).isFile())
      assert.strictEqual(fs.readFileSync(join(dest, "l"), "utf8"), outside)
    }))

  it.effect("refuses names outside the destination", () =>
    Effect.gen(function*() {
      const { dest, zip } = yield* sandbox
      fs.writeFileSync(zip, makeZip([stored("../escape.txt", "x")]))
      const error = yield* refusal(zip, dest)
      assert.include(error.message, "../escape.txt")
      assert.isFalse(fs.existsSync(join(dest, "..", "escape.txt")))
    }))
})

describe("walkTree and writeZip", () => {
  it.effect("round-trip a tree with modes through extractZip, links and FIFOs left out", () =>
    Effect.gen(function*() {
      const { root, dest, zip } = yield* sandbox
      const tree = join(root, "tree")
      fs.mkdirSync(join(tree, "sub"), { recursive: true })
      fs.writeFileSync(join(tree, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 })
      fs.writeFileSync(join(tree, "sub", "data.bin"), Buffer.from([0, 1, 2, 255]))
      fs.writeFileSync(join(tree, "empty"), "")
      fs.symlinkSync("/etc/passwd", join(tree, "passwd"))
      const entries = yield* walkTree(tree, { entries: 10, bytes: 1000, what: "download" }, "tree")
      yield* writeZip(entries, zip)
      yield* extractZip(zip, dest, DEFAULT_LIMITS)
      assert.deepStrictEqual(listing(dest), ["tree", "tree/empty", "tree/run.sh", "tree/sub", "tree/sub/data.bin"])
      assert.strictEqual(fs.statSync(join(dest, "tree/run.sh")).mode & 0o777, 0o755)
      assert.deepStrictEqual([...fs.readFileSync(join(dest, "tree/sub/data.bin"))], [0, 1, 2, 255])
    }))

  it.effect("refuses a tree over the byte or entry limit, naming the limit", () =>
    Effect.gen(function*() {
      const { root } = yield* sandbox
      const tree = join(root, "tree")
      fs.mkdirSync(tree)
      fs.writeFileSync(join(tree, "a"), "x".repeat(600))
      fs.writeFileSync(join(tree, "b"), "x".repeat(600))
      const bytes = yield* Effect.flip(walkTree(tree, { entries: 10, bytes: 1000, what: "download" }))
      assert.strictEqual(bytes.message, `The download of ${tree} exceeds the download limit of 1000 bytes`)
      const count = yield* Effect.flip(walkTree(tree, { entries: 1, bytes: 10_000, what: "download" }))
      assert.strictEqual(count.message, `The download of ${tree} exceeds the entry count limit of 1 entries`)
    }))
})
