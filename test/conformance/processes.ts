/** Background processes (`Runtime.spawn`): a handle to output, stdin, signals and exit, scoped. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Scope, Stream } from "effect"
import {
  InvalidEnvVarError,
  ProcessError,
  type ProcessHandle,
  ProcessNotFoundError,
  type ProcessOutput,
  type RuntimeError
} from "../../src/index.ts"
import { awaitProcessCount, hostProcesses, uniqueSeconds, withRuntime } from "./helpers.ts"
import type { ConformanceTarget } from "./target.ts"

/** Bash that answers each stdin line with `echo: <line>` until stdin ends. */
const ECHO = `while IFS= read -r line; do echo "echo: $line"; done`

/**
 * The handle's stdout (from the start) until it contains `text`. Stderr is left out: bash may
 * report there that the signal sent to the process group killed its foreground child ("Terminated").
 */
const outputUntil = (handle: ProcessHandle<RuntimeError>, text: string) =>
  handle.output.pipe(
    Stream.filter((chunk) => chunk.stream === "stdout"),
    Stream.map((chunk) => chunk.text),
    Stream.scan(() => "", (all: string, chunk) => all + chunk),
    Stream.takeUntil((all) => all.includes(text)),
    Stream.runLast,
    Effect.map((last) => last._tag === "Some" ? last.value : ""),
    Effect.timeout("20 seconds")
  )

/** All of one stream's text. */
const textOf = (chunks: ReadonlyArray<ProcessOutput>, stream: ProcessOutput["stream"]) =>
  chunks.filter((c) => c.stream === stream).map((c) => c.text).join("")

export const processesConformance = (target: ConformanceTarget) =>
  describe("background processes", () => {
    it.live("echoes what is written to stdin as it comes; closing stdin ends it, exit code 0, output complete", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const handle = yield* rt.spawn(ECHO)
          assert.isAbove(handle.pid, 1)
          yield* handle.write("a\n")
          assert.strictEqual(yield* outputUntil(handle, "echo: a\n"), "echo: a\n")
          yield* handle.write("b\n")
          assert.strictEqual(yield* outputUntil(handle, "echo: b\n"), "echo: a\necho: b\n")
          yield* handle.closeStdin
          assert.deepStrictEqual(yield* handle.wait, { exitCode: 0, signal: null })
          // After the exit the whole output is still there, and the stream ends.
          const all = yield* Stream.runCollect(handle.output)
          assert.strictEqual(textOf(all, "stdout"), "echo: a\necho: b\n")
          const closed = yield* Effect.flip(handle.write("c\n"))
          assert.instanceOf(closed, ProcessError)
          assert.strictEqual(closed.message, `The stdin of background process ${handle.id} is closed.`)
        }).pipe(Effect.scoped)))

    it.live("tags stdout and stderr, and reports a non-zero exit code", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const handle = yield* rt.spawn("echo out; echo err >&2; exit 7")
          assert.deepStrictEqual(yield* handle.wait, { exitCode: 7, signal: null })
          const all = yield* Stream.runCollect(handle.output)
          assert.strictEqual(textOf(all, "stdout"), "out\n")
          assert.strictEqual(textOf(all, "stderr"), "err\n")
        }).pipe(Effect.scoped)))

    it.live("SIGTERM ends it: with the exit code of its trap, or as killed by the signal", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const trapping = yield* rt.spawn(`trap 'echo bye; exit 3' TERM; echo ready; while :; do sleep 0.1; done`)
          yield* outputUntil(trapping, "ready")
          yield* trapping.signal("SIGTERM")
          assert.deepStrictEqual(yield* trapping.wait, { exitCode: 3, signal: null })
          assert.strictEqual(yield* outputUntil(trapping, "bye"), "ready\nbye\n")
          const plain = yield* rt.spawn(`exec sleep ${uniqueSeconds()}`)
          yield* plain.signal("SIGTERM")
          assert.deepStrictEqual(yield* plain.wait, { exitCode: null, signal: "SIGTERM" })
        }).pipe(Effect.scoped)))

    it.live("closing its scope kills it and everything it started; the handle then fails with ProcessNotFoundError", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const seconds = uniqueSeconds()
          const scope = yield* Scope.make()
          const handle = yield* Scope.provide(rt.spawn(`setsid sleep ${seconds} & exec sleep ${seconds}`), scope)
          yield* awaitProcessCount(`sleep ${seconds}`, 2)
          yield* Scope.close(scope, Exit.void)
          yield* awaitProcessCount(`sleep ${seconds}`, 0)
          const gone = yield* Effect.flip(handle.wait)
          assert.instanceOf(gone, ProcessNotFoundError)
          assert.strictEqual(
            gone.message,
            `No background process ${handle.id} in this session (its scope closed, or it never existed).`
          )
          assert.instanceOf(yield* Effect.flip(handle.signal("SIGTERM")), ProcessNotFoundError)
        })))

    it.live("dies with its session: releasing the runtime kills a process whose scope is still open", () =>
      Effect.gen(function*() {
        const seconds = uniqueSeconds()
        const outlives = yield* Scope.make()
        yield* withRuntime(target, (rt) =>
          Effect.gen(function*() {
            yield* Scope.provide(rt.spawn(`sleep ${seconds}`), outlives)
            yield* awaitProcessCount(`sleep ${seconds}`, 1)
          }))
        assert.deepStrictEqual(hostProcesses(`sleep ${seconds}`), [])
        // Its release now finds a released runtime, which is no error.
        yield* Scope.close(outlives, Exit.void)
      }))

    it.live("runs in cwd with env on top of the session's; secrets are masked; stdin text is written and closed", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.runCommand("mkdir -p sub")
          yield* rt.addEnvVars({ SESSION_VAR: "from-session" })
          // The last bytes look like the start of the secret: held back to be sure, then given at the end.
          const command = `pwd; echo "$SESSION_VAR $OWN"; echo "token=$TOKEN"; cat; printf 'tail: s3cret-t'`
          const handle = yield* rt.spawn(command, {
            cwd: "sub",
            env: { OWN: "own-value", TOKEN: Redacted.make("s3cret-token-value") },
            stdin: "piped in\n"
          })
          assert.deepStrictEqual(yield* handle.wait, { exitCode: 0, signal: null })
          const all = yield* Stream.runCollect(handle.output)
          assert.strictEqual(
            textOf(all, "stdout"),
            `${rt.info.workspace}/sub\nfrom-session own-value\ntoken=<redacted>\npiped in\ntail: s3cret-t`
          )
        }).pipe(Effect.scoped)))

    it.live("bad input is a typed error with a one-line message, and starts nothing", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const badName = yield* Effect.flip(rt.spawn("true", { env: { "BAD-NAME": "x" } }))
          assert.instanceOf(badName, InvalidEnvVarError)
          const missing = yield* Effect.flip(rt.spawn("true", { cwd: `${rt.info.workspace}/no-such-dir` }))
          assert.instanceOf(missing, ProcessError)
          assert.match(missing.message, /^Cannot start the process in .*no-such-dir: spawn .* ENOENT$/)
          // Every runtime restricts to its workspace by default, a process's cwd included.
          const outside = yield* Effect.flip(rt.spawn("true", { cwd: "/etc" }))
          assert.instanceOf(outside, ProcessError)
          assert.match(outside.message, /^Invalid path: \/etc\. You can only work with files in /)
          const handle = yield* rt.spawn(`exec sleep ${uniqueSeconds()}`)
          const badSignal = yield* Effect.flip(handle.signal("SIGNOPE"))
          assert.instanceOf(badSignal, ProcessError)
          assert.strictEqual(badSignal.message, "Unknown signal \"SIGNOPE\": use a name such as SIGTERM.")
          // Still running after the refused signal.
          yield* handle.signal("SIGKILL")
          assert.deepStrictEqual(yield* handle.wait, { exitCode: null, signal: "SIGKILL" })
        }).pipe(Effect.scoped)))

    it.live("a session holds at most 16 processes; closing one's scope frees its slot", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const seconds = uniqueSeconds()
          const first = yield* Scope.make()
          yield* Scope.provide(rt.spawn(`exec sleep ${seconds}`), first)
          for (let i = 1; i < 16; i++) yield* rt.spawn(`exec sleep ${seconds}`)
          const refused = yield* Effect.flip(rt.spawn(`exec sleep ${seconds}`))
          assert.instanceOf(refused, ProcessError)
          assert.strictEqual(
            refused.message,
            "The session holds its limit of background processes (EFFECT_SANDBOX_MAX_PROCESSES=16): " +
              "close a process's scope (or DELETE it) before starting another."
          )
          yield* awaitProcessCount(`sleep ${seconds}`, 16)
          yield* Scope.close(first, Exit.void)
          yield* rt.spawn(`exec sleep ${seconds}`)
          yield* awaitProcessCount(`sleep ${seconds}`, 16)
        }).pipe(Effect.scoped)))
  })
