/**
 * Python's `repr(str)`, for the texts OpenHands builds with it (an `OSError`'s path, BrowserGym's
 * accessibility tree, the git helper's errors): an agent that saw those texts from OpenHands sees
 * the same ones here, whatever the string holds.
 *
 * CPython's rules (`unicode_repr`): single quotes, unless the text has a single quote and no
 * double quote; a backslash and the chosen quote are escaped; `\t`, `\n` and `\r` are named; every
 * other character that `str.isprintable()` refuses (controls, format characters, surrogates,
 * private use, unassigned, separators other than the space) is `\xNN`, `\uNNNN` or `\UNNNNNNNN` by
 * its code point; the rest is kept as it is. Printability comes from the JavaScript engine's
 * Unicode tables, which may differ from Python's for characters assigned in a newer Unicode.
 */

const NAMED: Readonly<Record<string, string>> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" }

/**
 * What `repr` escapes besides the quote: the named characters and the unprintable ones. The
 * separators are `\p{Zl}`, `\p{Zp}` and `\p{Zs}` but the space, listed (a class difference needs
 * the `v` flag, beyond the ES2022 target).
 */
const ESCAPED = /[\\\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u

const hex = (code: number, digits: number): string => code.toString(16).padStart(digits, "0")

const escaped = (char: string): string => {
  const named = NAMED[char]
  if (named !== undefined) return named
  const code = char.codePointAt(0)!
  return code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`
}

/** Python's `repr(text)`: `it's` → `"it's"`, `a\r\nb` → `'a\\r\\nb'`, `\x00` → `'\\x00'`. */
export const pythonRepr = (text: string): string => {
  const quote = text.includes("'") && !text.includes("\"") ? "\"" : "'"
  let body = ""
  // By code point: an astral character is one escape, a lone surrogate another.
  for (const char of text) body += char === quote ? `\\${quote}` : ESCAPED.test(char) ? escaped(char) : char
  return quote + body + quote
}
