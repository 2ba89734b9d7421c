/** Environment variables (with secrets) and copying files in and out. */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Redacted } from "effect"
import { unzipSync } from "fflate"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CmdOutputObservation, CmdRunAction, InvalidEnvVarError, TransferError } from "../../src/index.ts"
import { TIMEOUT_TEMPLATE, withRuntime } from "./helpers.ts"
import { cmd } from "./shell.ts"
import type { ConformanceTarget } from "./target.ts"

const hostDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "conformance-host-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** This process's environment as a ConfigProvider record (the layers read other settings from it too). */
const processEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined))

/** A shell command printing `n` times the character `c`. */
const fill = (n: number, c: string) => `head -c ${n} /dev/zero | tr '\\0' ${c}`

export const envAndTransferConformance = (target: ConformanceTarget) => {
  describe("environment", () => {
    it.live("added variables reach the shell and later separate shells", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.addEnvVars({ greeting: "hello 'quoted' $world" })
          assert.strictEqual((yield* rt.runCommand("echo \"$GREETING\"")).content, "hello 'quoted' $world")
          const staticShell = yield* rt.runCommand(new CmdRunAction({ command: "echo \"$GREETING\"", isStatic: true }))
          assert.strictEqual(staticShell.content, "hello 'quoted' $world")
        })))

    it.live.skipIf(target.givenSandboxConfig === true)(
      "SANDBOX_* variables from the ConfigProvider reach it: the default timeout, the startup variables",
      () =>
        withRuntime(target, (rt) =>
          Effect.gen(function*() {
            // Its own timeout: the 2 s default is for the next command, and a loaded machine is slow.
            const echoed = yield* rt.runCommand(
              new CmdRunAction({ command: "echo \"$FROM_SANDBOX_VARS\"", timeout: 60 })
            )
            assert.strictEqual(echoed.content, "startup value")
            const timedOut = yield* rt.runCommand(new CmdRunAction({ command: "sleep 4", blocking: true }))
            assert.instanceOf(timedOut, CmdOutputObservation, timedOut.content)
            assert.strictEqual(
              timedOut.metadata.suffix,
              `\n[The command timed out after 2.0 seconds. ${TIMEOUT_TEMPLATE}]`
            )
          })).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({
            ...processEnv(),
            SANDBOX_TIMEOUT: "2",
            SANDBOX_RUNTIME_STARTUP_ENV_VARS: JSON.stringify({ FROM_SANDBOX_VARS: "startup value" })
          }))))
    )

    it.live("Redacted values are usable but masked in every observation", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          yield* rt.addEnvVars({ API_TOKEN: Redacted.make("s3cr3t-t0ken") })
          const echoed = yield* rt.runCommand(
            "echo \"token=$API_TOKEN\"; test \"$API_TOKEN\" = s3cr3t-t0ken && echo matches"
          )
          assert.strictEqual(echoed.content, "token=<redacted>\nmatches")
          yield* rt.runCommand("echo \"$API_TOKEN\" > t.txt")
          const read = yield* rt.read(`${rt.info.workspace}/t.txt`)
          assert.strictEqual(read.content, "<redacted>\n")
        })))

    it.live("a secret across the 30,000-character cut is masked before the cut, in no piece visible", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const secret = "Kq7Zx9-Wv3Jp8-Lm4Rt6-Hy2Gf5-Ds" // 30 characters
          yield* rt.addEnvVars({ CUT_TOKEN: Redacted.make(secret) })
          // 14,980 + 30 + 5,000 + 30 + 14,980 characters: both 15,000-character cuts (head and
          // tail, see truncateCmdOutput) fall inside a copy of the secret.
          const command = [
            fill(14_980, "a"),
            "printf %s \"$CUT_TOKEN\"",
            fill(5_000, "b"),
            "printf %s \"$CUT_TOKEN\"",
            fill(14_980, "c")
          ]
          const obs = yield* rt.runCommand(command.join("; "))
          // Masked first (34,980 characters), then cut: the head and tail each hold a whole mask.
          const notice = obs.content.slice(15_000, obs.content.length - 15_000)
          assert.match(
            notice,
            /^\n\[\.\.\. Observation truncated due to length; all \d+ characters are saved in \S+ \.\.\.\]\n$/
          )
          assert.strictEqual(
            obs.content,
            "a".repeat(14_980) + "<redacted>" + "b".repeat(10) + notice + "b".repeat(10) + "<redacted>" +
              "c".repeat(14_980)
          )
          const shown = JSON.stringify(obs)
          for (let i = 0; i + 4 <= secret.length; i++) assert.notInclude(shown, secret.slice(i, i + 4))
        })))

    it.live("a secret printed across two observations of one command is masked whole, in neither piece", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const secret = "Zt5Qm8-Np2Wx7-Rk4Lb9"
          yield* rt.addEnvVars({ SPLIT_TOKEN: Redacted.make(secret) })
          // The first half, then no output for longer than the no-change timeout (1 s), then the rest;
          // the continuation blocks until the command ends (a second no-change timeout could come first).
          const first = yield* cmd(
            rt,
            "printf 'key=%s' \"${SPLIT_TOKEN:0:10}\"; sleep 2; printf '%s done\\n' \"${SPLIT_TOKEN:10}\""
          )
          assert.strictEqual(first.exitCode, -1)
          assert.strictEqual(first.content, "key=")
          const rest = yield* cmd(rt, "", { timeout: 10, blocking: true })
          assert.strictEqual(rest.content, "<redacted> done")
          assert.strictEqual(rest.exitCode, 0)
          for (const shown of [JSON.stringify(first), JSON.stringify(rest)]) {
            for (let i = 0; i + 4 <= secret.length; i++) assert.notInclude(shown, secret.slice(i, i + 4))
          }
        }), 1))

    it.live("rejects invalid variable names without changing anything", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(rt.addEnvVars({ "BAD-NAME": "x", GOOD: "y" }))
          assert.instanceOf(error, InvalidEnvVarError)
          assert.deepStrictEqual(error.names, ["BAD-NAME"])
          assert.strictEqual((yield* rt.runCommand("echo ${GOOD:-unset}")).content, "unset")
        })))
  })

  describe("copy and list", () => {
    it.live("copies a file and a tree in (with binary content and modes) and lists them", () =>
      Effect.gen(function*() {
        const host = yield* hostDir
        writeFileSync(join(host, "single.txt"), "one file")
        mkdirSync(join(host, "tree/nested"), { recursive: true })
        writeFileSync(join(host, "tree/nested/bin.dat"), Buffer.from([0, 1, 2, 255, 254]))
        writeFileSync(join(host, "tree/run.sh"), "#!/bin/sh\necho ran\n", { mode: 0o755 })
        yield* withRuntime(target, (rt) =>
          Effect.gen(function*() {
            const dest = `${rt.info.workspace}/incoming`
            yield* rt.copyTo(join(host, "single.txt"), dest)
            yield* rt.copyTo(join(host, "tree"), dest, { recursive: true })
            assert.strictEqual((yield* rt.runCommand("cat incoming/single.txt")).content, "one file")
            assert.strictEqual(
              (yield* rt.runCommand("od -An -tu1 incoming/tree/nested/bin.dat | xargs")).content,
              "0 1 2 255 254"
            )
            assert.strictEqual((yield* rt.runCommand("incoming/tree/run.sh")).content, "ran")
            assert.deepStrictEqual(yield* rt.listFiles(dest), ["tree/", "single.txt"])
            assert.deepStrictEqual(yield* rt.listFiles(`${dest}/missing`), [])
            yield* rt.runCommand("mkdir -p incoming/B && touch incoming/a incoming/C")
            assert.deepStrictEqual(yield* rt.listFiles(dest), ["B/", "tree/", "a", "C", "single.txt"])
          }))
      }).pipe(Effect.scoped))

    it.live("copies a directory and a single file out as zips", () =>
      Effect.gen(function*() {
        const host = yield* hostDir
        yield* withRuntime(target, (rt) =>
          Effect.gen(function*() {
            yield* rt.runCommand("mkdir -p out/deep && printf 'abc' > out/a.txt && printf 'xyz' > out/deep/b.txt")
            yield* rt.copyFrom(`${rt.info.workspace}/out`, join(host, "out.zip"))
            const tree = unzipSync(readFileSync(join(host, "out.zip")))
            assert.strictEqual(new TextDecoder().decode(tree["a.txt"]), "abc")
            assert.strictEqual(new TextDecoder().decode(tree["deep/b.txt"]), "xyz")
            yield* rt.copyFrom(`${rt.info.workspace}/out/a.txt`, join(host, "one.zip"))
            const one = unzipSync(readFileSync(join(host, "one.zip")))
            assert.deepStrictEqual(Object.keys(one), ["a.txt"])
          }))
      }).pipe(Effect.scoped))

    it.live("fails clearly for a missing source", () =>
      withRuntime(target, (rt) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(rt.copyTo("/nonexistent/source.txt", rt.info.workspace))
          assert.instanceOf(error, TransferError)
          assert.strictEqual(error.message, "Source file /nonexistent/source.txt does not exist")
          const missing = yield* Effect.flip(rt.copyFrom(`${rt.info.workspace}/nothing`, "/tmp/never.zip"))
          assert.instanceOf(missing, TransferError)
        })))
  })
}
