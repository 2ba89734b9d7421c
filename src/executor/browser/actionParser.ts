/**
 * A parser for BrowserGym's action language: lines of Python-style calls such as
 * `click("12")`, `fill('a5', "hello")`, `select_option("7", ["a", "b"])` or
 * `click("3", button="right")`. Agents write these, so they are parsed, never
 * evaluated: only calls whose arguments are literals (strings, numbers, booleans,
 * None, lists and tuples of those) are accepted; anything else is a syntax error
 * that names the line and column.
 */

/** A literal argument value. */
export type Literal = string | number | boolean | null | ReadonlyArray<Literal>

/** One call as written: positional and keyword arguments, in order. */
export interface ParsedCall {
  readonly name: string
  readonly args: ReadonlyArray<Literal>
  readonly kwargs: Readonly<Record<string, Literal>>
  /** The call's source text, for error messages. */
  readonly source: string
}

/** Why the text is not a list of calls. */
export class ActionSyntaxError extends Error {
  constructor(message: string, line: number, column: number) {
    super(`SyntaxError: ${message} (line ${line}, column ${column})`)
  }
}

type Token =
  | { readonly kind: "name"; readonly value: string; readonly at: number }
  | { readonly kind: "string"; readonly value: string; readonly at: number }
  | { readonly kind: "number"; readonly value: number; readonly at: number }
  | { readonly kind: "punct"; readonly value: string; readonly at: number }
  | { readonly kind: "newline"; readonly at: number }
  | { readonly kind: "end"; readonly at: number }

const ESCAPES: Readonly<Record<string, string>> = {
  "\n": "",
  "\\": "\\",
  "'": "'",
  "\"": "\"",
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "0": "\0"
}

const NUMBER = /^(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)/
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/

/** Splits the text into tokens; newlines count only outside brackets (Python's implicit joining). */
const tokenize = (text: string, fail: (message: string, at: number) => never): Array<Token> => {
  const tokens: Array<Token> = []
  let depth = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "\n" || c === ";") {
      if (depth === 0) tokens.push({ kind: "newline", at: i })
      i++
    } else if (c === " " || c === "\t" || c === "\r") {
      i++
    } else if (c === "\\" && text[i + 1] === "\n") {
      i += 2
    } else if (/[A-Za-z_]/.test(c)) {
      const prefix = /^([rRbBuU]{0,2})(['"])/.exec(text.slice(i))
      if (prefix !== null && /^[rRuU]*$/.test(prefix[1]!)) {
        const [value, end] = readString(text, i + prefix[1]!.length, /r/i.test(prefix[1]!), fail)
        tokens.push({ kind: "string", value, at: i })
        i = end
      } else {
        const name = NAME.exec(text.slice(i))![0]
        tokens.push({ kind: "name", value: name, at: i })
        i += name.length
      }
    } else if (c === "'" || c === "\"") {
      const [value, end] = readString(text, i, false, fail)
      tokens.push({ kind: "string", value, at: i })
      i = end
    } else if (/[0-9.]/.test(c) && NUMBER.test(text.slice(i))) {
      const raw = NUMBER.exec(text.slice(i))![0]
      tokens.push({ kind: "number", value: Number(raw.replaceAll("_", "")), at: i })
      i += raw.length
    } else if ("()[],=-+".includes(c)) {
      if (c === "(" || c === "[") depth++
      if (c === ")" || c === "]") depth = Math.max(0, depth - 1)
      tokens.push({ kind: "punct", value: c, at: i })
      i++
    } else {
      fail(`unexpected character ${JSON.stringify(c)}`, i)
    }
  }
  tokens.push({ kind: "end", at: text.length })
  return tokens
}

/** A Python string literal starting at `start` (its quote); returns the value and the index after it. */
const readString = (
  text: string,
  start: number,
  raw: boolean,
  fail: (message: string, at: number) => never
): [string, number] => {
  const quote = text[start]!
  const triple = text.startsWith(quote.repeat(3), start)
  const close = triple ? quote.repeat(3) : quote
  let i = start + close.length
  let value = ""
  while (true) {
    if (i >= text.length || (!triple && text[i] === "\n")) fail("unterminated string literal", start)
    if (text.startsWith(close, i)) return [value, i + close.length]
    const c = text[i]!
    if (c !== "\\") {
      value += c
      i++
      continue
    }
    const next = text[i + 1] ?? ""
    if (raw) {
      value += c + next
      i += 2
    } else if (next === "x" || next === "u" || next === "U") {
      const size = next === "x" ? 2 : next === "u" ? 4 : 8
      const hex = text.slice(i + 2, i + 2 + size)
      if (!new RegExp(`^[0-9a-fA-F]{${size}}$`).test(hex)) fail(`invalid \\${next} escape`, i)
      value += String.fromCodePoint(parseInt(hex, 16))
      i += 2 + size
    } else if (next in ESCAPES) {
      value += ESCAPES[next]
      i += 2
    } else {
      value += c + next
      i += 2
    }
  }
}

const describe = (token: Token) =>
  token.kind === "end" ? "end of input" : token.kind === "newline" ? "end of line" : `'${String(token.value)}'`

/** Parses `text` into calls, or throws an ActionSyntaxError. */
export const parseActions = (text: string): Array<ParsedCall> => {
  const lineStarts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1)
  const fail = (message: string, at: number): never => {
    let line = 0
    while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= at) line++
    throw new ActionSyntaxError(message, line + 1, at - lineStarts[line]! + 1)
  }
  const tokens = tokenize(text, fail)
  let pos = 0
  const peek = () => tokens[pos]!
  const expect = (value: string) => {
    const token = peek()
    if (token.kind !== "punct" || token.value !== value) {
      fail(`expected '${value}' but found ${describe(token)}`, token.at)
    }
    pos++
  }
  const isPunct = (value: string) => {
    const token = peek()
    return token.kind === "punct" && token.value === value
  }

  /** Items up to `closer`, with an optional trailing comma. */
  const sequence = (closer: string): Array<Literal> => {
    const items: Array<Literal> = []
    while (!isPunct(closer)) {
      items.push(literal())
      if (!isPunct(closer)) expect(",")
    }
    pos++
    return items
  }

  const literal = (): Literal => {
    const token = peek()
    pos++
    switch (token.kind) {
      case "string": {
        // Adjacent literals concatenate, as in Python.
        let value = token.value
        while (peek().kind === "string") value += (tokens[pos++] as { value: string }).value
        return value
      }
      case "number":
        return token.value
      case "name":
        if (token.value === "True") return true
        if (token.value === "False") return false
        if (token.value === "None") return null
        return fail(`only literal arguments are allowed, found the name '${token.value}'`, token.at)
      case "punct":
        if (token.value === "[") return sequence("]")
        if (token.value === "(") return sequence(")")
        if (token.value === "-" || token.value === "+") {
          const number = peek()
          if (number.kind !== "number") return fail(`expected a number after '${token.value}'`, number.at)
          pos++
          return token.value === "-" ? -number.value : number.value
        }
        return fail(`unexpected '${token.value}'`, token.at)
      default:
        return fail(`expected a value but found ${describe(token)}`, token.at)
    }
  }

  const call = (): ParsedCall => {
    const name = peek()
    if (name.kind !== "name") return fail(`expected an action name but found ${describe(name)}`, name.at)
    pos++
    expect("(")
    const args: Array<Literal> = []
    // No prototype: an agent's `__proto__=` or `toString=` is a keyword like any other (then refused by name).
    const kwargs: Record<string, Literal> = Object.create(null)
    while (!isPunct(")")) {
      const token = peek()
      const next = tokens[pos + 1]!
      if (token.kind === "name" && next.kind === "punct" && next.value === "=") {
        if (token.value in kwargs) fail(`keyword argument repeated: ${token.value}`, token.at)
        pos += 2
        kwargs[token.value] = literal()
      } else {
        if (Object.keys(kwargs).length > 0) fail("positional argument follows keyword argument", token.at)
        args.push(literal())
      }
      if (!isPunct(")")) expect(",")
    }
    const end = peek().at + 1
    pos++
    return { name: name.value, args, kwargs, source: text.slice(name.at, end) }
  }

  const calls: Array<ParsedCall> = []
  while (peek().kind !== "end") {
    if (peek().kind === "newline") {
      pos++
      continue
    }
    calls.push(call())
    const after = peek()
    if (after.kind !== "newline" && after.kind !== "end") {
      fail(`expected end of line but found ${describe(after)}`, after.at)
    }
  }
  return calls
}
