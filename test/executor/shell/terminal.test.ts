/**
 * Shell behaviour an interactive terminal has and prompts written for OpenHands
 * expect (issue 15): job notices for background commands, commands that wait for
 * more lines (typed in later as `is_input`), `$?` carried into the next command.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { BashSession } from "../../../src/executor/shell/BashSession.ts"
import { foregroundProcessGroup } from "../../../src/executor/shell/processTree.ts"
import { CmdRunAction } from "../../../src/schema/Action.ts"
import type { CmdOutputObservation } from "../../../src/schema/Observation.ts"
import { TIMEOUT_TEMPLATE } from "../../conformance/helpers.ts"
import { withBashSession } from "./withBashSession.ts"

const SOFT_TIMEOUT = `\n[The command has no new output after 1 seconds. ${TIMEOUT_TEMPLATE}]`
const BELOW = "[Below is the output of the previous command.]\n"

const withSession = <A, E>(body: (session: BashSession) => Effect.Effect<A, E>) =>
  withBashSession({ noChangeTimeoutSeconds: 1, marker: `terminal-test-${process.pid}` }, body)

const run = (session: BashSession, command: string, isInput = false): Effect.Effect<CmdOutputObservation, unknown> =>
  session.execute(new CmdRunAction({ command, isInput }))

/**
 * The command line of `pid` once it has exec'd: bash prints the notice after the fork, so the
 * child may still be a copy of bash for a moment on a loaded host, and until `execve` has laid
 * out the new program's stack the kernel shows an empty command line. That stack is built
 * after the binary and its loader are mapped, which on a CI host busy building images took
 * over 5 s once, so this polls for up to 30 s and, if it never settles, says what the process
 * was doing (its `/proc` state) rather than only that the line was empty.
 */
const commandLine = (pid: number, log?: string) =>
  Effect.gen(function*() {
    const execing = () => {
      const first = readCommandLine(pid)[0]
      return first === undefined || first.endsWith("bash")
    }
    for (let waited = 0; waited < 30_000 && execing(); waited += 50) {
      yield* Effect.sleep("50 millis")
    }
    const line = readCommandLine(pid)
    if (line.length === 0) {
      const state = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").filter((l) => /^(Name|State):/.test(l))
      const output = log !== undefined && existsSync(log) ? readFileSync(log, "utf8") : "(no log)"
      assert.fail(`pid ${pid} never showed a command line: ${state.join(", ")}; its output: ${output}`)
    }
    return line
  })

const readCommandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)

describe("background jobs", () => {
  it.live("`sleep 5 &` shows bash's job notice with the real pid, as in a terminal", () =>
    withSession((session) =>
      Effect.gen(function*() {
        const obs = yield* run(session, "sleep 5 &")
        const notice = /^\[1\] (\d+)$/.exec(obs.content)
        assert.isNotNull(notice, obs.content)
        const pid = Number(notice![1])
        assert.strictEqual(obs.metadata.pid, pid)
        assert.strictEqual(obs.exitCode, 0)
        assert.strictEqual(obs.metadata.suffix, "\n[The command completed with exit code 0.]")
        assert.deepStrictEqual(yield* commandLine(pid), ["sleep", "5"])
        const second = yield* run(session, "sleep 6 &")
        assert.match(second.content, /^\[2\] \d+$/)
        yield* run(session, "kill %1 %2")
      })
    ))

  it.live("`python3 -m http.server ... > server.log 2>&1 &` shows its notice; the pid is the server's", () =>
    withSession((session) =>
      Effect.gen(function*() {
        const obs = yield* run(session, "python3 -m http.server 0 --bind 127.0.0.1 > server.log 2>&1 &")
        const pid = Number(/^\[1\] (\d+)$/.exec(obs.content)?.[1])
        assert.strictEqual(obs.metadata.pid, pid)
        assert.include(yield* commandLine(pid, join(session.cwd(), "server.log")), "http.server")
        yield* run(session, `kill ${pid}`)
      })
    ))

  it.live("a job that outlives the prompt's grace: its Done notice comes with the next command", () =>
    withSession((session) =>
      Effect.gen(function*() {
        // Longer than the 0.5 s a new job is given before the prompt (`echo done &` ends within it).
        const started = yield* run(session, "sleep 0.8 &")
        const pid = Number(/^\[1\] (\d+)$/.exec(started.content)?.[1])
        // Until bash has reaped it (then it knows the job is done).
        for (let waited = 0; waited < 5_000 && existsSync(`/proc/${pid}`); waited += 50) {
          yield* Effect.sleep("50 millis")
        }
        const next = yield* run(session, "echo next")
        assert.strictEqual(next.content, "next\n[1]+  Done                    sleep 0.8")
      })
    ))

  it.live("the next command still sees `$?` of the previous one", () =>
    withSession((session) =>
      Effect.gen(function*() {
        yield* run(session, "(exit 7)")
        assert.strictEqual((yield* run(session, "echo $?")).content, "7")
      })
    ))
})

describe("commands that wait for more lines", () => {
  it.live("`cat << EOF` waits (no-change timeout, exit -1), is fed by is_input and completes with exit 0", () =>
    withSession((session) =>
      Effect.gen(function*() {
        const waiting = yield* run(session, "cat << EOF")
        assert.strictEqual(waiting.content, "")
        assert.strictEqual(waiting.exitCode, -1)
        assert.strictEqual(waiting.metadata.prefix, "")
        assert.strictEqual(waiting.metadata.suffix, SOFT_TIMEOUT)
        for (const line of ["line 1", "line 2"]) {
          const fed = yield* run(session, line, true)
          assert.strictEqual(fed.content, "")
          assert.strictEqual(fed.exitCode, -1)
          assert.strictEqual(fed.metadata.prefix, BELOW)
          assert.strictEqual(fed.metadata.suffix, SOFT_TIMEOUT)
        }
        const done = yield* run(session, "EOF", true)
        assert.strictEqual(done.content, "line 1\nline 2")
        assert.strictEqual(done.exitCode, 0)
        assert.strictEqual(done.metadata.suffix, "\n[The command completed with exit code 0.]")
        assert.strictEqual((yield* run(session, "echo after")).content, "after")
      })
    ))

  it.live("an unclosed quote waits for its end; earlier lines of the command have run", () =>
    withSession((session) =>
      Effect.gen(function*() {
        const waiting = yield* run(session, "echo first\necho \"abc")
        assert.strictEqual(waiting.content, "first")
        assert.strictEqual(waiting.exitCode, -1)
        const done = yield* run(session, "def\"", true)
        assert.strictEqual(done.content, "abc\ndef")
        assert.strictEqual(done.exitCode, 0)
      })
    ))

  it.live("a final backslash continues the line on the next input", () =>
    withSession((session) =>
      Effect.gen(function*() {
        assert.strictEqual((yield* run(session, "echo a \\")).exitCode, -1)
        const done = yield* run(session, "b", true)
        assert.strictEqual(done.content, "a b")
        assert.strictEqual(done.exitCode, 0)
      })
    ))

  it.live("a here-document with its body and a syntax error still complete at once", () =>
    withSession((session) =>
      Effect.gen(function*() {
        assert.strictEqual((yield* run(session, "cat << EOF\nbody\nEOF")).content, "body")
        const broken = yield* run(session, "echo a )")
        assert.strictEqual(broken.exitCode, 2)
        assert.include(broken.content, "syntax error near unexpected token `)'")
      })
    ))

  it.live("C-c abandons a command waiting for lines", () =>
    withSession((session) =>
      Effect.gen(function*() {
        yield* run(session, "if true; then")
        const stopped = yield* run(session, "C-c", true)
        assert.strictEqual(stopped.exitCode, 130)
        assert.strictEqual((yield* run(session, "echo ok")).content, "ok")
      })
    ))
})

/**
 * `next` runs after a job that ends with 0 on C-c, so bash goes on with the line after the key:
 * `next` must be sent the key too, and the rest of the line must not run.
 */
const stopsAfterKeyedJob = (next: string) =>
  withSession((session) =>
    Effect.gen(function*() {
      const line = `bash -c 'trap "exit 0" INT; echo ready; while :; do sleep 0.05; done'; ${next}; echo ran > after`
      const first = yield* session.execute(new CmdRunAction({ command: line, timeout: 1 }))
      assert.strictEqual(first.content, "ready")
      const stopped = yield* session.execute(new CmdRunAction({ command: "C-c", isInput: true, timeout: 10 }))
      assert.strictEqual(stopped.exitCode, 130)
      assert.strictEqual((yield* run(session, "ls after 2>&1; echo $?")).content.split("\n").at(-1), "2")
    })
  )

describe("C-c stops the line (lostKey.ts)", () => {
  it.live(
    "pressed between two jobs of a line, at any moment, it is not lost",
    () =>
      withSession((session) =>
        Effect.gen(function*() {
          const line = `${"sleep 0.01; ".repeat(25)}sleep 30`
          for (let i = 0; i < 20; i++) {
            // The key at 50 to 240 ms: while one of the short jobs or bash between two of them has the terminal.
            const first = yield* session.execute(new CmdRunAction({ command: line, timeout: 0.05 + i * 0.01 }))
            assert.strictEqual(first.exitCode, -1)
            const stopped = yield* session.execute(new CmdRunAction({ command: "C-c", isInput: true, timeout: 10 }))
            assert.strictEqual(stopped.exitCode, 130, `the key pressed at ${50 + i * 10} ms stops the line`)
          }
        })
      ),
    60_000
  )

  it.live(
    "pressed as a job takes the terminal, before the job's exec, it is not lost",
    () =>
      withSession((session) =>
        Effect.gen(function*() {
          const shellPid = Number((yield* run(session, "echo $$")).content)
          const idle = foregroundProcessGroup(shellPid)
          for (let i = 0; i < 20; i++) {
            // The key goes the moment the job's group has the terminal: bash's copy of itself may
            // not have exec'd `sleep` yet, and catches the signal with bash's handler.
            const first = yield* Effect.forkChild(
              session.execute(new CmdRunAction({ command: "sleep 30", timeout: 20 }))
            )
            while (foregroundProcessGroup(shellPid) === idle) yield* Effect.yieldNow
            const stopped = yield* session.execute(new CmdRunAction({ command: "C-c", isInput: true, timeout: 10 }))
            assert.strictEqual(stopped.exitCode, 130, `attempt ${i}: the key stops the job`)
            yield* Fiber.join(first)
          }
        })
      ),
    120_000
  )

  it.live(
    "a job that takes the terminal after the key is sent it again, so the rest of the line does not run",
    () => stopsAfterKeyedJob("sleep 30")
  )

  // The pipeline's leader is a subshell running shell code: it looks like a job about to exec (bash's
  // copy, with bash's handler) for as long as it runs, and is sent the key after SUBSHELL_LOOKS.
  it.live("a subshell that takes the terminal after the key is sent it too", () =>
    stopsAfterKeyedJob("while :; do :; done | cat"))
})

describe("the command file", () => {
  it.live("a short command after a long one runs alone (the file is written over, not truncated)", () =>
    withSession((session) =>
      Effect.gen(function*() {
        const long = yield* run(session, "echo first; echo second; echo third; echo fourth")
        assert.strictEqual(long.content, "first\nsecond\nthird\nfourth")
        const short = yield* run(session, "echo x")
        assert.strictEqual(short.content, "x")
        assert.strictEqual(short.metadata.exitCode, 0)
      })
    ))
})
