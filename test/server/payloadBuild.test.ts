/**
 * The payload's build leaves a payload built from the same inputs as it is
 * (scripts/build-payload.ts): every test process that starts a runtime from source asks for it, and
 * a build costs seconds of CPU. Checked with `--check` (its exit code says up to date or stale) in
 * a copy of the checkout's inputs, so no case rebuilds or touches the checkout's own payload.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { appendFileSync, cpSync, rmSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { payloadDirectory } from "../../src/serverStart/payload.ts"
import { tempDir } from "./helpers.ts"

const root = join(import.meta.dirname, "..", "..")

/** `--check` in `dir`: its exit code and its line. */
const check = (dir: string) => {
  const run = spawnSync(process.execPath, [join(dir, "scripts", "build-payload.ts"), "--check"], { encoding: "utf8" })
  return { status: run.status, line: run.stdout.trim() }
}

const UP_TO_DATE = { status: 0, line: "payload/: up to date" }
const STALE = { status: 1, line: "payload/: stale" }

describe("the payload's build", () => {
  it.live(
    "says up to date for the payload built from the same inputs, and stale once a source or a file changes",
    () =>
      Effect.gen(function*() {
        // The checkout's payload, built now if it was stale.
        const payload = yield* payloadDirectory
        assert.deepStrictEqual(check(root), UP_TO_DATE)

        // A copy of what the build reads, beside a copy of the payload it made.
        const dir = yield* tempDir("payload-build-")
        // scripts/ whole: which of its files the build reads is the script's own list (BUILD_FILES).
        for (const tree of ["src", "scripts"]) cpSync(join(root, tree), join(dir, tree), { recursive: true })
        for (const file of ["package.json", "package-lock.json"]) cpSync(join(root, file), join(dir, file))
        symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
        cpSync(payload, join(dir, "payload"), { recursive: true })
        assert.deepStrictEqual(check(dir), UP_TO_DATE)

        // A source changed: stale, until it is as it was.
        const source = join(dir, "src", "server", "main.ts")
        cpSync(source, `${source}.orig`)
        appendFileSync(source, "\n")
        assert.deepStrictEqual(check(dir), STALE)
        cpSync(`${source}.orig`, source)
        rmSync(`${source}.orig`)
        assert.deepStrictEqual(check(dir), UP_TO_DATE)

        // The lock changed (another version of a bundled package): stale.
        appendFileSync(join(dir, "package-lock.json"), "\n")
        assert.deepStrictEqual(check(dir), STALE)
        cpSync(join(root, "package-lock.json"), join(dir, "package-lock.json"))
        assert.deepStrictEqual(check(dir), UP_TO_DATE)

        // A file of the payload is missing: stale.
        rmSync(join(dir, "payload", "server-main.mjs"))
        assert.deepStrictEqual(check(dir), STALE)
      }),
    120_000
  )
})
