/**
 * The start's progress as the CLI shows it on stderr (src/cli/startProgressLine.ts), on
 * `--runtime local` (whose start waits for its server): piped, a plain line per phase with the time
 * since the start began; on a terminal, one line drawn in place and cleared once the runtime is
 * ready, so the session begins on a clean line. stdout stays the command's output either way.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { eventually } from "../eventually.ts"
import { cliOnPty } from "./pty.ts"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")

const WAITING = /^\[\d+\.\ds\] waiting for the action server at http:\/\/127\.0\.0\.1:\d+$/
const READY = /^\[\d+\.\ds\] ready: local sandbox [0-9a-f-]{36}$/

describe("effect-sandbox's start progress", () => {
  it("piped: a plain line per phase on stderr, the command's output alone on stdout", () => {
    const result = spawnSync(process.execPath, [CLI, "run", "--runtime", "local", "--", "echo hi"], {
      encoding: "utf8",
      timeout: 60_000
    })
    assert.strictEqual(result.stdout, "hi\n", result.stderr)
    assert.strictEqual(result.status, 0)
    const lines = result.stderr.split("\n")
    assert.strictEqual(lines.length, 4, result.stderr)
    assert.match(lines[0]!, WAITING)
    assert.match(lines[1]!, READY)
    assert.match(lines[2]!, /^effect-sandbox run \(local runtime, workspace .+\)$/)
    assert.strictEqual(lines[3], "")
    assert.notInclude(result.stderr, "\r")
  }, 60_000)

  it.live("on a terminal: one line drawn in place, cleared when the runtime is ready", () =>
    Effect.gen(function*() {
      const session = yield* cliOnPty(["run", "--runtime", "local", "--", "echo hi"])
      yield* eventually("the CLI exited", () => session.exit !== undefined, 60_000)
      assert.strictEqual(session.exit, 0, session.output)
      // Each drawing goes back to the line's start and clears it; the last clears it for the banner.
      const drawings = session.output.split("\r\x1b[K")
      assert.strictEqual(drawings[0], "", JSON.stringify(session.output))
      const banner = drawings.at(-1)!
      assert.match(banner, /^effect-sandbox run \(local runtime, workspace .+\)\r\nhi\r\n$/)
      const drawn = drawings.slice(1, -1)
      assert.isAbove(drawn.length, 0, JSON.stringify(session.output))
      for (const line of drawn) assert.match(line, WAITING)
      assert.notInclude(session.output, "ready:")
    }).pipe(Effect.scoped), 90_000)
})
