/** `shellQuote` gives one word that bash and sh read back as the very text, whatever it holds. */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { shellQuote } from "../../src/quoting/shellQuote.ts"

const TEXTS = [
  "",
  "plain",
  "it's",
  "'",
  "''",
  "a b",
  "$HOME `id` $(id)",
  "back\\slash\\",
  "a\r\nb\tc",
  "\"'\"",
  "*?[a]~"
]

describe("shellQuote", () => {
  it("single-quotes, closing and escaping a single quote", () => {
    assert.strictEqual(shellQuote("it's"), "'it'\\''s'")
    assert.strictEqual(shellQuote(""), "''")
    assert.strictEqual(shellQuote("a\r\nb"), "'a\r\nb'")
  })

  for (const shell of ["bash", "sh"]) {
    it(`${shell} reads each quoted text back as one word, byte for byte`, () => {
      const script = TEXTS.map((text) => `printf '%s\\0' ${shellQuote(text)}`).join("\n")
      assert.deepStrictEqual(execFileSync(shell, ["-c", script], { encoding: "utf8" }).split("\0"), [...TEXTS, ""])
    })
  }
})
