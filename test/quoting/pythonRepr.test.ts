/**
 * `pythonRepr` against what CPython's `repr` prints (each expected text was printed by
 * `python3 -c 'print(repr(...))'`, CPython 3.11).
 */
import { assert, describe, it } from "@effect/vitest"
import { pythonRepr } from "../../src/quoting/pythonRepr.ts"

const CASES: ReadonlyArray<readonly [text: string, repr: string]> = [
  ["", "''"],
  ["plain", "'plain'"],
  ["it's", "\"it's\""],
  ["say \"hi\"", "'say \"hi\"'"],
  ["both ' and \"", "'both \\' and \"'"],
  ["back\\slash", "'back\\\\slash'"],
  ["a\r\nb\tc", "'a\\r\\nb\\tc'"],
  ["\x00\x07\x1b\x7f", "'\\x00\\x07\\x1b\\x7f'"],
  ["café \u00a0nbsp", "'café \\xa0nbsp'"],
  ["\u00ad\u0085", "'\\xad\\x85'"],
  ["\u2028\u2029", "'\\u2028\\u2029'"],
  ["\u200b\u200e\ufeff", "'\\u200b\\u200e\\ufeff'"],
  ["\ue000", "'\\ue000'"],
  ["\u{1F600} emoji", "'\u{1F600} emoji'"],
  ["\u{E0001}", "'\\U000e0001'"],
  ["\ud800", "'\\ud800'"],
  ["中文", "'中文'"],
  ["\u3000", "'\\u3000'"],
  ["\ufffe", "'\\ufffe'"],
  ["/tmp/a b'c", "\"/tmp/a b'c\""]
]

describe("pythonRepr", () => {
  for (const [text, repr] of CASES) {
    it(`repr(${JSON.stringify(text)}) is ${repr}`, () => {
      assert.strictEqual(pythonRepr(text), repr)
    })
  }
})
