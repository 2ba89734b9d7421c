/** The BrowserGym action language: parsing (never evaluating) and binding to the action set. */
import { assert, describe, it } from "@effect/vitest"
import { parseActions } from "../../src/executor/browser/actionParser.ts"
import { bindAction } from "../../src/executor/browser/actionSet.ts"

const bind = (text: string) => parseActions(text).map(bindAction)
const failure = (text: string): string => {
  try {
    bind(text)
  } catch (error) {
    return (error as Error).message
  }
  return assert.fail(`expected ${text} to be refused`)
}

describe("browser action parser", () => {
  it("parses calls with positional and keyword literals, comments and blank lines", () => {
    const calls = parseActions(`
# open the form
goto("http://127.0.0.1:8000/a?b=1")
fill('12', "it's \\"quoted\\"\\n")  # trailing comment
click("3", button="right", modifiers=["Shift", 'Control'],)
scroll(0, -300.5); noop()
select_option("7", ("a", "b"))
`)
    assert.deepStrictEqual(calls.map((c) => [c.name, c.args, c.kwargs]), [
      ["goto", ["http://127.0.0.1:8000/a?b=1"], {}],
      ["fill", ["12", "it's \"quoted\"\n"], {}],
      ["click", ["3"], { button: "right", modifiers: ["Shift", "Control"] }],
      ["scroll", [0, -300.5], {}],
      ["noop", [], {}],
      ["select_option", ["7", ["a", "b"]], {}]
    ])
    assert.strictEqual(calls[2]!.source, `click("3", button="right", modifiers=["Shift", 'Control'],)`)
  })

  it("reads Python string forms: triple quotes, raw strings, escapes, implicit concatenation", () => {
    const [call] = parseActions(`fill("1", """two
lines""" r"\\d+" '\\x41\\u00e9' "\\t")`)
    assert.deepStrictEqual(call!.args, ["1", "two\nlines\\d+Aé\t"])
  })

  it("joins lines inside brackets, as Python does", () => {
    assert.deepStrictEqual(parseActions(`fill(\n  "5",\n  "x"\n)`)[0]!.args, ["5", "x"])
  })

  it("refuses anything that is not a call of literals, naming line and column", () => {
    assert.strictEqual(
      failure(`click(x)`),
      "SyntaxError: only literal arguments are allowed, found the name 'x' (line 1, column 7)"
    )
    assert.strictEqual(failure(`noop()\nimport os`), "SyntaxError: expected '(' but found 'os' (line 2, column 8)")
    assert.strictEqual(
      failure(`__import__("os").system("id")`),
      "SyntaxError: unexpected character \".\" (line 1, column 17)"
    )
    assert.strictEqual(failure(`fill("1", "open`), "SyntaxError: unterminated string literal (line 1, column 11)")
    assert.strictEqual(
      failure(`click("1") click("2")`),
      "SyntaxError: expected end of line but found 'click' (line 1, column 12)"
    )
    assert.strictEqual(
      failure(`click(bid="1", "2")`),
      "SyntaxError: positional argument follows keyword argument (line 1, column 16)"
    )
  })
})

describe("browser action set", () => {
  it("binds arguments to parameters with defaults, and accepts integer bids", () => {
    assert.deepStrictEqual(
      bind(`click(12)\nnoop()\nselect_option("4", "one")\nupload_file("9", ["a.txt", "b.txt"])`).map((
        a
      ) => [a.name, a.params]),
      [
        ["click", { bid: "12", button: "left", modifiers: [] }],
        ["noop", { wait_ms: 1000 }],
        ["select_option", { bid: "4", options: ["one"] }],
        ["upload_file", { bid: "9", file: ["a.txt", "b.txt"] }]
      ]
    )
  })

  it("refuses unknown actions and arguments that do not fit, in Python's terms", () => {
    assert.match(failure(`eval("1")`), /^NameError: 'eval' is not a browser action; the actions are goto, go_back, /)
    assert.strictEqual(failure(`click()`), "TypeError: click() missing required argument: 'bid'")
    // Names every object inherits are neither actions nor keywords (own-property lookups only).
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      assert.match(failure(`${name}()`), new RegExp(`^NameError: '${name}' is not a browser action`))
      assert.strictEqual(
        failure(`go_back(${name}=1)`),
        `TypeError: go_back() got an unexpected keyword argument '${name}'`
      )
    }
    assert.strictEqual(failure(`go_back(1)`), "TypeError: go_back() takes 0 positional arguments but 1 were given")
    assert.strictEqual(
      failure(`fill("1", value="a", text="b")`),
      "TypeError: fill() got an unexpected keyword argument 'text'"
    )
    assert.strictEqual(
      failure(`fill("1", "a", value="b")`),
      "TypeError: fill() got multiple values for argument 'value'"
    )
    assert.strictEqual(
      failure(`scroll("down", 3)`),
      "TypeError: scroll() argument 'delta_x' must be a number, not \"down\""
    )
    assert.strictEqual(failure(`fill("1", 5)`), "TypeError: fill() argument 'value' must be a string, not 5")
  })
})
