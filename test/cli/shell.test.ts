/**
 * `effect-sandbox shell` as a user meets it: the real CLI (from source) on a
 * pseudo-terminal. Output streams as the command prints it; Ctrl-C goes to the
 * running command (which stops, the session going on) instead of ending the CLI;
 * at the prompt a second Ctrl-C, or Ctrl-D, ends it, ending the prompt's line. Piped, its stdout
 * is the commands' output alone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CLI_RUNTIMES } from "../../src/cli/runtimeLayer.ts"
import { EXIT_HINT } from "../../src/cli/shellSession.ts"
import { awaitProcessCount, hostProcesses, uniqueSeconds } from "../conformance/helpers.ts"
import { eventually } from "../eventually.ts"
import { cliOnPty } from "./pty.ts"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")
/** The prompt as readline draws it on a terminal: to column 1, clear to the end, `$ `, cursor to column 3. */
const PROMPT = "\x1b[1G\x1b[0J$ \x1b[3G"

/** The CLI's shell on a PTY. */
const shellOnPty = cliOnPty(["shell"])

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
        // The prompt's line is ended: the user's own prompt starts on a fresh line.
        assert.isTrue(
          session.output.endsWith(`${EXIT_HINT}\r\n${PROMPT}\r\n`),
          JSON.stringify(session.output.slice(at))
        )
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
      assert.isTrue(session.output.endsWith(`${PROMPT}\r\n`), JSON.stringify(session.output.slice(-40)))
      yield* awaitProcessCount(`sleep ${seconds}`, 0)
      assert.deepStrictEqual(hostProcesses(`sleep ${seconds}`), [])
    }).pipe(Effect.scoped), 60_000)
})

describe("effect-sandbox shell, piped", () => {
  it(
    "prints the commands' output alone on stdout; the banner and exit lines on stderr; exits with the last command's code",
    () => {
      const workspace = mkdtempSync(join(tmpdir(), "effect-sandbox-piped-"))
      try {
        const result = spawnSync(process.execPath, [CLI, "shell", "--workspace", workspace], {
          input: "echo one\nprintf two\nfalse\n",
          encoding: "utf8",
          timeout: 60_000
        })
        assert.strictEqual(result.stdout, "one\ntwo", result.stderr)
        assert.strictEqual(
          result.stderr,
          `effect-sandbox shell (cli runtime, workspace ${workspace}). Output streams as it comes; while a command`
            + ` runs, Ctrl-C goes to it and typed lines are its input. ${EXIT_HINT}\n`
            + "[The command completed with exit code 0.]\n"
            // `two` ended no line: the exit line starts on its own.
            + "\n[The command completed with exit code 0.]\n"
            + "[The command completed with exit code 1.]\n"
        )
        // `false` came last: the session fails as `bash < script` would.
        assert.strictEqual(result.status, 1)
      } finally {
        rmSync(workspace, { recursive: true, force: true })
      }
    },
    60_000
  )

  it("loses no line of a command it follows in steps: a line printed between two steps is streamed by the next", () => {
    const workspace = mkdtempSync(join(tmpdir(), "effect-sandbox-piped-"))
    try {
      // 40 lines over about 2 s: the CLI follows the command in 0.5 s steps, so lines fall between steps
      // (on LocalRuntime, whose steps are HTTP requests, the most often: 4 of 24 were lost before).
      const result = spawnSync(process.execPath, [CLI, "shell", "--runtime", "local", "--workspace", workspace], {
        input: "for i in $(seq 40); do echo tick $i; sleep 0.05; done\n",
        encoding: "utf8",
        timeout: 60_000
      })
      assert.strictEqual(result.stdout, Array.from({ length: 40 }, (_, i) => `tick ${i + 1}\n`).join(""), result.stderr)
      assert.strictEqual(result.status, 0)
    } finally {
      rmSync(workspace, { recursive: true, force: true })
    }
  }, 60_000)

  it("--help names every runtime with the variables its layer reads", () => {
    const result = spawnSync(process.execPath, [CLI, "shell", "--help"], { encoding: "utf8", timeout: 60_000 })
    assert.strictEqual(result.status, 0, result.stderr)
    for (const name of CLI_RUNTIMES) assert.include(result.stdout, `${name}: `)
    assert.include(result.stdout, "modal: a Modal sandbox (MODAL_TOKEN_ID, MODAL_TOKEN_SECRET, MODAL_SERVER_URL)")
    assert.include(result.stdout, "runloop: a Runloop devbox (RUNLOOP_API_KEY, RUNLOOP_BASE_URL)")
    assert.include(result.stdout, "daytona: a Daytona sandbox (DAYTONA_API_KEY, DAYTONA_API_URL)")
    assert.include(result.stdout, "e2b: an E2B sandbox (E2B_API_KEY)")
    assert.include(result.stdout, "kubernetes: a pod (KUBECONFIG)")
    assert.include(result.stdout, "remote: a sandbox of a runtime API (--api-url, SANDBOX_API_KEY)")
  }, 60_000)
})
