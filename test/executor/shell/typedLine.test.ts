/**
 * Commands typed into the prompt's line as ANSI-C strings (typedLine.ts) reach `eval` byte for
 * byte, whatever characters they hold, and those the line cannot carry go through the file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import type { BashSession } from "../../../src/executor/shell/BashSession.ts"
import { typedScript } from "../../../src/executor/shell/typedLine.ts"
import { CmdRunAction } from "../../../src/schema/Action.ts"
import { withBashSession } from "./withBashSession.ts"

/** Every ASCII character but NUL, then text beyond ASCII. */
const EVERY_CHARACTER = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1)).join("") + "é €😀"

describe("typedScript", () => {
  it("is an ANSI-C string bash reads back as the script, with no character the terminal acts on", () => {
    const quoted = typedScript(EVERY_CHARACTER)!
    // Printable ASCII only (bytes beyond it are text to the terminal), and no `!` for history expansion.
    assert.match(quoted.replace(/[^\x00-\x7f]/gu, ""), /^\$'[\x20-\x7e]*'$/)
    assert.notInclude(quoted, "!")
    const read = execFileSync("/bin/bash", ["--norc", "-c", `printf %s ${quoted}`], { encoding: "utf8" })
    assert.strictEqual(read, EVERY_CHARACTER)
  })

  it("leaves a script with a NUL, or too long for the terminal's line, to the file", () => {
    assert.isNull(typedScript("echo a\0b"))
    assert.isNull(typedScript(`echo ${"a".repeat(2000)}`))
    assert.isNull(typedScript(`echo ${"\x01".repeat(600)}`))
    assert.isNotNull(typedScript(`echo ${"a".repeat(1000)}`))
  })
})

const runIn = (session: BashSession, command: string) => session.execute(new CmdRunAction({ command, blocking: true }))

describe("a typed command in the session", () => {
  it.live("runs as the same text as from the file: quotes, `!`, control characters, several lines", () =>
    withBashSession(
      { noChangeTimeoutSeconds: 5, marker: `typed-line-test-${process.pid}` },
      (session) =>
        Effect.gen(function*() {
          const typed = yield* runIn(
            session,
            `printf '%s|' 'it'"'"'s' "a\\\\b" '!x' "!!" 'é €' && printf '\\n' && printf 'x\x01\ty\x15z\x7f\n' | od -An -c\nexit_code=3; echo "two lines $exit_code"`
          )
          assert.strictEqual(typed.content, "it's|a\\b|!x|!!|é €|\n   x 001  \\t   y 025   z 177  \\n\ntwo lines 3")
          assert.strictEqual(typed.metadata.exitCode, 0)
          // Longer than a typed line may be: through the file, the same way.
          const long = yield* runIn(session, `echo ${"y".repeat(3000)} | wc -c`)
          assert.strictEqual(long.content, "3001")
          // `$?` of the previous command reaches the next one on both paths.
          yield* runIn(session, "(exit 4)")
          assert.strictEqual((yield* runIn(session, "echo $?")).content, "4")
          yield* runIn(session, "(exit 5)")
          assert.strictEqual((yield* runIn(session, `echo $? ${"z".repeat(2500)} | cut -c1-3`)).content, "5 z")
        })
    ))
})
