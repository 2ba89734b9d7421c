/**
 * What the OpenHands wire says only in its texts, read as values (src/client/semantics.ts), on
 * CliRuntime and over HTTP (LocalRuntime): the trailing newline of `write`, a failed edit, a
 * command refused while the previous one runs, both time-outs leaving the command running, and
 * `runCommandKillOnTimeout` interrupting it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { readFileSync } from "node:fs"
import { commandOutcome, editFailure, runCommandKillOnTimeout, writtenText } from "../../src/client/semantics.ts"
import { CliRuntime } from "../../src/layers/CliRuntime.ts"
import { LocalRuntime } from "../../src/layers/LocalRuntime.ts"
import { CmdRunAction } from "../../src/schema/Action.ts"
import type { CmdOutputObservation, ErrorObservation, FileEditObservation } from "../../src/schema/Observation.ts"
import { Runtime } from "../../src/services/Runtime.ts"

const cmd = (observation: CmdOutputObservation | ErrorObservation): CmdOutputObservation => {
  if (observation._tag !== "CmdOutputObservation") {
    throw new Error(`expected a command's output: ${observation.content}`)
  }
  return observation
}

const edited = (observation: FileEditObservation | ErrorObservation): FileEditObservation => {
  if (observation._tag !== "FileEditObservation") throw new Error(`expected an edit's output: ${observation.content}`)
  return observation
}

const layers: ReadonlyArray<readonly [string, (noChange: number) => Layer.Layer<Runtime, unknown>]> = [
  ["cli", (noChange) => CliRuntime.layer({ noChangeTimeoutSeconds: noChange })],
  ["local", (noChange) => LocalRuntime.layer({ noChangeTimeoutSeconds: noChange })]
]

describe("SDK semantics of the OpenHands wire", () => {
  it("writtenText is what FileWriteAction leaves in a file", () => {
    assert.strictEqual(writtenText("a"), "a\n")
    assert.strictEqual(writtenText("a\n"), "a\n\n")
    assert.strictEqual(writtenText(""), "\n")
  })

  for (const [kind, layer] of layers) {
    it.live(
      `${kind}: writes, failed edits, refusals, time-outs and the kill on time-out`,
      () =>
        Effect.gen(function*() {
          const rt = yield* Runtime
          const path = `${rt.info.workspace}/a.txt`
          for (const content of ["one line", "two\nlines\n"]) {
            yield* rt.write({ path, content })
            assert.strictEqual(readFileSync(path, "utf8"), writtenText(content))
          }

          const failed = edited(yield* rt.edit({ path, command: "str_replace", oldStr: "absent", newStr: "x" }))
          assert.strictEqual(
            editFailure(failed),
            `No replacement was performed, old_str \`absent\` did not appear verbatim in ${path}.`
          )
          assert.isUndefined(
            editFailure(edited(yield* rt.edit({ path, command: "str_replace", oldStr: "two", newStr: "2" })))
          )

          assert.deepStrictEqual(commandOutcome(cmd(yield* rt.runCommand("exit 3"))), {
            _tag: "Completed",
            exitCode: 3
          })
          assert.deepStrictEqual(
            commandOutcome(
              cmd(yield* rt.runCommand(new CmdRunAction({ command: "sleep 30", timeout: 1, blocking: true })))
            ),
            { _tag: "StillRunning", timeout: "hard" }
          )
          const refused = cmd(yield* rt.runCommand("echo never"))
          assert.strictEqual(refused.exitCode, -1)
          assert.deepStrictEqual(commandOutcome(refused), { _tag: "NotExecuted" })
          yield* rt.runCommand(new CmdRunAction({ command: "C-c", isInput: true }))

          // The no-change time-out (1 s here) leaves the command running too.
          assert.deepStrictEqual(
            commandOutcome(cmd(yield* rt.runCommand("sleep 30"))),
            { _tag: "StillRunning", timeout: "no-change" }
          )
          yield* rt.runCommand(new CmdRunAction({ command: "C-c", isInput: true }))

          const killed = yield* runCommandKillOnTimeout(
            rt,
            new CmdRunAction({ command: "sleep 30", timeout: 1, blocking: true })
          )
          assert.deepStrictEqual(commandOutcome(cmd(killed.observation)), { _tag: "StillRunning", timeout: "hard" })
          assert.deepStrictEqual(commandOutcome(cmd(killed.interrupted!)), { _tag: "Completed", exitCode: 130 })
          const next = yield* runCommandKillOnTimeout(rt, "echo next")
          assert.deepStrictEqual(commandOutcome(cmd(next.observation)), { _tag: "Completed", exitCode: 0 })
          assert.strictEqual(next.observation.content, "next")
          assert.isUndefined(next.interrupted)
        }).pipe(Effect.provide(layer(1))),
      60_000
    )
  }
})
