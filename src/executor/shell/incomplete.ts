/**
 * Whether bash, given a command at its prompt, would wait for more lines: a
 * here-document with no body (`cat << EOF`), an unclosed quote, `if` without `fi`.
 * In a terminal (OpenHands' tmux) such a command sits there until the agent types
 * the rest as `is_input`; we run complete commands from a file, where the missing
 * rest would be a syntax error instead, so these are typed in like a terminal does.
 *
 * Only bash knows its grammar, so `bash -n` (parse, run nothing) decides; a quick
 * lexer spares that process for the commands that surely close (most of them).
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { sandboxEnv } from "../childEnv.ts"

/** Reserved words that open a construct, and the word that closes it. */
const CLOSER: Readonly<Record<string, string>> = {
  if: "fi",
  case: "esac",
  for: "done",
  while: "done",
  until: "done",
  select: "done",
  "{": "}",
  "[[": "]]"
}
const CLOSERS = new Set(Object.values(CLOSER))

/** Characters that end a word outside quotes. */
const METACHARACTER = /[\s;&|<>()]/

/**
 * A quick lexer that rules out most commands without a process: false when every quote,
 * `$(`, `(`, `${`, backquote and here-document closes and the reserved words pair up
 * (`if`/`fi`, `for`/`done`, `{`/`}` ...), and the text does not end in `|`, `&&`, `||` or
 * `\`. True when in doubt (`case` patterns, `function`, a lone `done` argument), for
 * `bash -n` to decide.
 */
export const mayStayOpen = (command: string): boolean => {
  /** What closes each open context: `'"'`, `` '`' ``, `")"` or `"}"`. */
  const stack: Array<string> = []
  const balance = new Map<string, number>()
  const heredocs: Array<{ readonly delimiter: string; readonly stripTabs: boolean }> = []
  let word = ""
  const endWord = () => {
    const closer = CLOSER[word]
    if (closer !== undefined) balance.set(closer, (balance.get(closer) ?? 0) + 1)
    else if (CLOSERS.has(word)) balance.set(word, (balance.get(word) ?? 0) - 1)
    word = ""
  }
  let i = 0
  while (i < command.length) {
    const c = command[i]!
    const top = stack.at(-1)
    if (c === "\\") {
      if (i + 1 >= command.length) return true
      if (top !== "\"" && top !== "`") word += command.slice(i, i + 2)
      i += 2
      continue
    }
    if (top === "\"" || top === "`") {
      if (c === top) stack.pop()
      else if (c === "`") stack.push("`")
      else if (c === "$" && (command[i + 1] === "(" || command[i + 1] === "{")) {
        stack.push(command[i + 1] === "(" ? ")" : "}")
        i++
      }
      i++
      continue
    }
    if (c === "'" || (c === "$" && command[i + 1] === "'")) {
      const start = c === "$" ? i + 2 : i + 1
      const end = c === "$" ? closingAnsiQuote(command, start) : command.indexOf("'", start)
      if (end === -1) return true
      word += "'"
      i = end + 1
      continue
    }
    if (c === "\"" || c === "`") {
      stack.push(c)
      word += c
      i++
      continue
    }
    if (c === "$" && (command[i + 1] === "(" || command[i + 1] === "{")) {
      stack.push(command[i + 1] === "(" ? ")" : "}")
      word += "$"
      i += 2
      continue
    }
    if (c === "#" && word === "") {
      const end = command.indexOf("\n", i)
      i = end === -1 ? command.length : end
      continue
    }
    if (!METACHARACTER.test(c)) {
      if (c === "}" && top === "}" && word !== "") stack.pop()
      word += c
      i++
      continue
    }
    endWord()
    if (c === "(") stack.push(")")
    else if (c === ")") {
      if (top !== ")") return true
      stack.pop()
    } else if (c === "<" && command.startsWith("<<", i) && !command.startsWith("<<<", i)) {
      const heredoc = /^<<(-?)[ \t]*((?:[^\s;&|<>()'"\\]|'[^']*'|"[^"\\]*"|\\.)+)/.exec(command.slice(i))
      if (heredoc === null) return true
      heredocs.push({ delimiter: heredoc[2]!.replace(/['"\\]/g, ""), stripTabs: heredoc[1] === "-" })
      i += heredoc[0].length
      continue
    } else if (c === "\n" && heredocs.length > 0) {
      // The bodies follow this line, one after the other; go on at the newline ending the last.
      let end = i
      for (const { delimiter, stripTabs } of heredocs.splice(0)) {
        end = bodyEnd(command, end + 1, delimiter, stripTabs)
        if (end === -1) return true
      }
      i = end
      continue
    }
    i++
  }
  endWord()
  if (stack.length > 0 || heredocs.length > 0) return true
  if ([...balance.values()].some((n) => n !== 0)) return true
  return /(?:\||&&)\s*$/.test(command)
}

/** Index of the `'` closing a `$'...'` string that starts at `from` (backslash escapes), or -1. */
const closingAnsiQuote = (text: string, from: number): number => {
  for (let i = from; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text[i] === "'") return i
  }
  return -1
}

/** Index of the newline (or the text's end) ending the first line at or after `from` equal to `delimiter`; -1 if none. */
const bodyEnd = (text: string, from: number, delimiter: string, stripTabs: boolean): number => {
  let start = from
  while (start <= text.length) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline
    const line = text.slice(start, end)
    if ((stripTabs ? line.replace(/^\t+/, "") : line) === delimiter) return end
    if (newline === -1) return -1
    start = newline + 1
  }
  return -1
}

/** What `bash -n` says (LC_ALL=C) when the text ends inside a construct. */
const ENDS_OPEN = /unexpected end of file|unexpected EOF while looking for matching|delimited by end-of-file/

/**
 * A typed line longer than this would be cut by the terminal's line buffer (4096 bytes
 * in canonical mode), so such commands run from the file whatever they lack.
 */
const MAX_TYPED_LINE = 4000

/**
 * True when `command` is incomplete and short enough per line to be typed into the terminal.
 * Most commands are ruled out by the lexer alone, at no more cost than a plain value.
 */
export const waitsForMoreInput = (command: string, shellPath: string): Effect.Effect<boolean> =>
  mayStayOpen(command) ? askBash(command, shellPath) : Effect.succeed(false)

const askBash = Effect.fnUntraced(function*(command: string, shellPath: string) {
  // A final backslash continues the line: bash at a terminal waits, `bash -n` at end of input does not.
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(command)) return true
  if (command.split("\n").some((line) => Buffer.byteLength(line) > MAX_TYPED_LINE)) return false
  const stderr = yield* parseOnly(command, shellPath)
  return ENDS_OPEN.test(stderr)
})

/** `bash -n`'s diagnostics for `command` (empty when it parses); killed if interrupted. */
const parseOnly = (command: string, shellPath: string) =>
  Effect.callback<string>((resume) => {
    const child = spawn(shellPath, ["--norc", "--noprofile", "-n"], {
      env: { ...sandboxEnv(), LC_ALL: "C", BASH_ENV: "" },
      stdio: ["pipe", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    // A shell that cannot start says nothing of the command: treat it as complete.
    child.on("error", () => resume(Effect.succeed("")))
    child.on("close", () => resume(Effect.succeed(stderr)))
    child.stdin.on("error", () => undefined).end(command)
    return Effect.sync(() => child.kill("SIGKILL"))
  })
