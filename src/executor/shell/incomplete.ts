/**
 * Whether bash, given a command at its prompt, would wait for more lines: a
 * here-document with no body (`cat << EOF`), an unclosed quote, `if` without `fi`.
 * In a terminal (OpenHands' tmux) such a command sits there until the agent types
 * the rest as `is_input`; we run complete commands from a file, where the missing
 * rest would be a syntax error instead, so these are typed in like a terminal does.
 *
 * Only bash knows its grammar, so `bash -n` (parse, run nothing) decides; a
 * command without any of the constructs that can stay open skips that process.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { sandboxEnv } from "../childEnv.ts"

/** Every way a command can leave bash waiting needs one of these; most one-liners have none. */
const MAY_STAY_OPEN = /<<|['"`({]|\[\[|\\$|(?:\||&&)\s*$|\b(?:if|for|while|until|case|select|function)\b/m

/** What `bash -n` says (LC_ALL=C) when the text ends inside a construct. */
const ENDS_OPEN = /unexpected end of file|unexpected EOF while looking for matching|delimited by end-of-file/

/**
 * A typed line longer than this would be cut by the terminal's line buffer (4096 bytes
 * in canonical mode), so such commands run from the file whatever they lack.
 */
const MAX_TYPED_LINE = 4000

/** True when `command` is incomplete and short enough per line to be typed into the terminal. */
export const waitsForMoreInput = Effect.fn("waitsForMoreInput")(function*(command: string, shellPath: string) {
  if (!MAY_STAY_OPEN.test(command)) return false
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
