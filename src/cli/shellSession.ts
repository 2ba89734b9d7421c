/**
 * The terminal side of `effect-sandbox shell`: reads lines and Ctrl-C presses,
 * prints a command's output as it comes (`runStream`) and its exit line, and
 * follows a running command step by step (interactive.ts). At the prompt a
 * second Ctrl-C in a row, or Ctrl-D, ends the session.
 *
 * stdout carries the commands' output only, byte for byte: the prompt, the echo of what is typed,
 * the exit lines and the hints go to stderr, as an interactive bash writes its prompt and echo, so
 * `effect-sandbox shell > out.txt` (or piped input) leaves only the output in the file.
 *
 * The session ends with its last command's exit code, as `bash < script` does, so a script piped in
 * fails when its last command failed.
 */
import { Console, Effect, Option, Queue, Stream } from "effect"
import { createInterface } from "node:readline"
import type { CmdRunAction } from "../schema/Action.ts"
import { CmdOutputObservation, type Observation } from "../schema/Observation.ts"
import type { RuntimeShape } from "../services/Runtime.ts"
import { commandAction, nextStep, stillRunning, type TerminalInput } from "./interactive.ts"

export const EXIT_HINT = "(To exit, press Ctrl-C again or Ctrl-D)"

/**
 * The terminal's lines, Ctrl-C presses and end, as a queue. On a TTY readline reads keys raw, so
 * Ctrl-C arrives here as an event instead of a SIGINT that would end the CLI. Piped input is a
 * script: no prompt, and Ctrl-C (a SIGINT) ends the CLI as for any command.
 */
const terminalInputs = (interactive: boolean) =>
  Effect.gen(function*() {
    const inputs = yield* Queue.unbounded<TerminalInput>()
    let open = true
    const terminal = yield* Effect.acquireRelease(
      Effect.sync(() =>
        createInterface({ input: process.stdin, output: process.stderr, terminal: interactive, prompt: "$ " })
      ),
      (rl) => Effect.sync(() => rl.close())
    )
    terminal.on("line", (line) => Queue.offerUnsafe(inputs, { _tag: "Line", line }))
    terminal.on("SIGINT", () => Queue.offerUnsafe(inputs, { _tag: "Interrupt" }))
    terminal.on("close", () => {
      open = false
      Queue.offerUnsafe(inputs, { _tag: "End" })
    })
    return { inputs, prompt: () => interactive && open && terminal.prompt() }
  })

export const shellSession = Effect.fn("shellSession")(function*(rt: RuntimeShape) {
  const interactive = process.stdin.isTTY === true
  const { inputs, prompt } = yield* terminalInputs(interactive)
  /** Whether the last thing printed ended a line, so the exit line starts on its own. */
  let atLineStart = true

  /** Run one step, printing its output chunks as they come; its observation (the stream's last element). */
  const follow = (action: CmdRunAction) =>
    rt.runStream(action).pipe(
      Stream.runFoldEffect(
        () => Option.none<Observation>(),
        (_, event) =>
          event._tag === "Observation" ? Effect.succeed(Option.some(event.observation)) : Effect.sync(() => {
            process.stdout.write(event.text)
            atLineStart = event.text.endsWith("\n")
            return Option.none<Observation>()
          })
      ),
      Effect.flatMap(Option.match({
        onNone: () => Effect.die(new Error("runStream ended without an observation")),
        onSome: Effect.succeed
      }))
    )

  /** The last command's exit code (1: it could not run), the session's own at its end. */
  let exitCode = 0

  /** The observation's closing line (exit code, a note), or a non-command observation's text. */
  const report = (observation: Observation) => {
    exitCode = observation instanceof CmdOutputObservation ? observation.exitCode : 1
    const text = observation instanceof CmdOutputObservation ? observation.metadata.suffix.trim() : observation.content
    const separator = atLineStart ? "" : "\n"
    atLineStart = true
    return text === "" ? Effect.void : Console.error(separator + text)
  }

  /** The session ends at the prompt: end the prompt's line, so the user's own prompt starts on a fresh one. */
  const endAtPrompt = Effect.sync(() => {
    if (interactive) process.stderr.write("\n")
    return exitCode
  })

  let interruptedAtPrompt = false
  while (true) {
    prompt()
    const input = yield* Queue.take(inputs)
    if (input._tag === "End") return yield* endAtPrompt
    if (input._tag === "Interrupt") {
      if (interruptedAtPrompt) return yield* endAtPrompt
      interruptedAtPrompt = true
      yield* Console.error(`\n${EXIT_HINT}`)
      continue
    }
    interruptedAtPrompt = false
    const command = commandAction(input.line)
    if (Option.isNone(command)) continue
    let observation = yield* follow(command.value)
    let ended = false
    while (stillRunning(observation)) {
      // Piped lines are the next commands, not input to this one.
      const step = nextStep(interactive && !ended ? yield* Queue.poll(inputs) : Option.none())
      // Ctrl-D: nothing more to send; the command is followed to its end, then the session ends.
      if (step === "end") ended = true
      else observation = yield* follow(step)
    }
    yield* report(observation)
    if (ended) return exitCode
  }
})
