/**
 * `effect-sandbox shell` as a user meets it: the real CLI (from source) on a
 * pseudo-terminal. Output streams as the command prints it; Ctrl-C goes to the
 * running command (which stops, the session going on) instead of ending the CLI;
 * at the prompt a second Ctrl-C, or Ctrl-D, ends it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as Pty from "node-pty"
import { createRequire } from "node:module"
import { join } from "node:path"
import { EXIT_HINT } from "../../src/cli/shellSession.ts"
import { awaitProcessCount, hostProcesses, uniqueSeconds } from "../conformance/helpers.ts"
import { eventually } from "../eventually.ts"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")
const pty = createRequire(import.meta.url)("node-pty") as typeof Pty

/** The CLI's shell on a PTY: everything it printed so far, and how it exited. Killed when the scope closes. */
const shellOnPty = Effect.acquireRelease(
  Effect.sync(() => {
    const term = pty.spawn(process.execPath, [CLI, "shell"], {
      cols: 200,
      rows: 50,
      cwd: process.cwd(),
      env: process.env
    })
    const session = { term, output: "", exit: undefined as number | undefined }
    term.onData((data) => (session.output += data))
    term.onExit(({ exitCode }) => (session.exit = exitCode))
    return session
  }),
  (session) => Effect.sync(() => session.exit === undefined && session.term.kill())
)

/** Wait until the output after `from` includes `text`; the output's length then. */
const printed = (session: { readonly output: string }, text: string, from = 0, ms = 15_000) =>
  eventually(
    `the CLI printed ${JSON.stringify(text)}; it printed ${JSON.stringify(session.output.slice(from))}`,
    () => session.output.indexOf(text, from) !== -1,
    ms
  ).pipe(Effect.map(() => session.output.indexOf(text, from) + text.length))

describe("effect-sandbox shell on a terminal", () => {
  it.live(
    "streams output, sends Ctrl-C to a running command, and a second Ctrl-C at the prompt exits",
    () =>
      Effect.gen(function*() {
        const session = yield* shellOnPty
        let at = yield* printed(session, EXIT_HINT)
        // Each number is printed 0.4 s after the last: seen before the loop ends, it was streamed.
        session.term.write("for i in 1 2 3; do echo n$i; sleep 0.4; done\r")
        at = yield* printed(session, "n1", at)
        assert.notInclude(session.output.slice(at), "exit code 0")
        at = yield* printed(session, "[The command completed with exit code 0.]", at)
        assert.include(session.output, "n3")

        const seconds = uniqueSeconds()
        session.term.write(`sleep ${seconds}\r`)
        yield* awaitProcessCount(`sleep ${seconds}`, 1)
        session.term.write("\x03")
        at = yield* printed(session, "[The command completed with exit code 130. CTRL+C was sent.]", at)
        yield* awaitProcessCount(`sleep ${seconds}`, 0)
        assert.strictEqual(session.exit, undefined, "Ctrl-C ended the CLI")

        session.term.write("echo still-$((40 + 2))\r")
        at = yield* printed(session, "still-42", at)
        at = yield* printed(session, "[The command completed with exit code 0.]", at)

        session.term.write("\x03")
        at = yield* printed(session, EXIT_HINT, at)
        assert.strictEqual(session.exit, undefined, "one Ctrl-C at the prompt ended the CLI")
        session.term.write("\x03")
        yield* eventually("the CLI exited", () => session.exit !== undefined, 10_000)
        assert.strictEqual(session.exit, 0)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("Ctrl-D at the prompt exits, releasing the runtime's shell", () =>
    Effect.gen(function*() {
      const session = yield* shellOnPty
      yield* printed(session, EXIT_HINT)
      const seconds = uniqueSeconds()
      // A background job of the session: released with the runtime when the CLI ends.
      session.term.write(`(sleep ${seconds} &)\r`)
      yield* awaitProcessCount(`sleep ${seconds}`, 1)
      session.term.write("\x04")
      yield* eventually("the CLI exited", () => session.exit !== undefined, 10_000)
      assert.strictEqual(session.exit, 0)
      yield* awaitProcessCount(`sleep ${seconds}`, 0)
      assert.deepStrictEqual(hostProcesses(`sleep ${seconds}`), [])
    }).pipe(Effect.scoped), 60_000)
})
