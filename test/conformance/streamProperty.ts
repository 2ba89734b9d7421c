/**
 * `runStream` loses nothing, as a property: a command printing at random times, followed in short
 * steps (hard and soft time-outs, `""` continue steps, input, C-c, a refused command, output that
 * spills to disk between two steps) gives, at every step, chunks that join to the step's content,
 * and over all steps the command's whole output; a line's newline comes with the line.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, ManagedRuntime, Schema, Stream } from "effect"
import { type ActionEvent, CmdOutputObservation, CmdRunAction, Runtime, type RuntimeShape } from "../../src/index.ts"
import type { ConformanceTarget } from "./target.ts"

const int = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const Piece = Schema.Struct({
  /** Short lines printed at once, or (large) `seq` output of about 110 kB, past the in-memory limit. */
  lines: int(1, 4),
  large: Schema.Boolean,
  /** Pause after the piece. */
  gapMs: int(0, 250)
})

const Scenario = Schema.Struct({
  pieces: Schema.Array(Piece).check(Schema.isBetweenLength(1, 4)),
  /** How the command ends: by itself, after reading a line of input, or by C-c (it then sleeps until killed). */
  ending: Schema.Literals(["exit", "input", "interrupt"]),
  /** The hard time-out of each step; the soft one is 0.3 s, so both end steps. */
  stepMs: int(100, 500),
  /** The step (from the second) that sends the input or C-c. */
  actAt: int(1, 3),
  /** Whether the second step is a new command, refused while this one runs (when it surely does). */
  refuse: Schema.Boolean
})
type Scenario = typeof Scenario.Type

/** The bash command of `scenario`, and the output it prints when not interrupted. */
const commandOf = (scenario: Scenario) => {
  const parts: Array<string> = []
  let expected = ""
  scenario.pieces.forEach((piece, i) => {
    if (piece.large) {
      parts.push("seq 1 20000")
      expected += Array.from({ length: 20000 }, (_, n) => `${n + 1}\n`).join("")
    } else {
      const lines = Array.from({ length: piece.lines }, (_, j) => `piece${i}-line${j}\n`).join("")
      parts.push(`printf '${lines.replaceAll("\n", "\\n")}'`)
      expected += lines
    }
    if (piece.gapMs > 0) parts.push(`sleep ${piece.gapMs / 1000}`)
  })
  if (scenario.ending === "input") {
    parts.push("read -r answer", "echo \"got $answer\"")
    expected += "got v42\n"
  }
  if (scenario.ending === "interrupt") parts.push("sleep 30")
  return { command: parts.join("; "), expected }
}

/** The step's action: `""`, or the input / C-c / refused command the scenario sends at this step. */
const stepAction = (scenario: Scenario, step: number, timeout: number) => {
  if (step === scenario.actAt && scenario.ending === "input") {
    return new CmdRunAction({ command: "v42", isInput: true, timeout })
  }
  if (step === scenario.actAt && scenario.ending === "interrupt") {
    return new CmdRunAction({ command: "C-c", isInput: true, timeout })
  }
  // Only while the command surely runs (it waits for the input or C-c sent later): a command that
  // ended after its last observation would run this one instead, dropping its leftover (OpenHands').
  if (step === 1 && scenario.refuse && scenario.ending !== "exit" && scenario.actAt > 1) {
    return new CmdRunAction({ command: "echo refused", timeout })
  }
  return new CmdRunAction({ command: "", timeout })
}

/** One step: its chunks and its observation. */
const streamed = (rt: RuntimeShape, action: CmdRunAction) =>
  rt.runStream(action).pipe(
    Stream.runCollect,
    Effect.map((events: ReadonlyArray<ActionEvent>) => {
      const last = events.at(-1)!
      assert.strictEqual(last._tag, "Observation")
      const observation = (last as ActionEvent & { _tag: "Observation" }).observation
      assert.instanceOf(observation, CmdOutputObservation)
      const chunks = events.flatMap((event) => event._tag === "Output" ? [event.text] : [])
      return { chunks, observation: observation as CmdOutputObservation }
    })
  )

/** A step's chunks as the agent's view has them: leading and trailing line ends dropped. */
const asContent = (chunks: ReadonlyArray<string>) => chunks.join("").replace(/^\n+/, "").trimEnd()

/** The step's content is its chunks (for output past 30,000 characters: their head and tail). */
const assertStepLossless = (chunks: ReadonlyArray<string>, content: string) => {
  const text = asContent(chunks)
  if (text.length <= 30_000) return assert.strictEqual(content, text)
  assert.isTrue(content.startsWith(text.slice(0, 15_000)), "a truncated content starts with the chunks' head")
  assert.isTrue(content.endsWith(text.slice(-15_000)), "a truncated content ends with the chunks' tail")
}

/**
 * A line written whole (a `printf` line, `got ...`) comes with its newline, never leaving it to
 * start the next chunk. (Large output is cut where the terminal's reads happen to end, mid-line.)
 */
const assertNewlinesWithLines = (chunks: ReadonlyArray<string>) =>
  chunks.forEach((chunk, i) => {
    if (chunk.startsWith("\n") && /(line\d+|got v42)$/.test(chunks[i - 1] ?? "")) {
      assert.fail(`chunk ${i} starts with the previous line's newline: ${JSON.stringify(chunks.slice(i - 1, i + 1))}`)
    }
  })

const run = (rt: RuntimeShape, scenario: Scenario) =>
  Effect.gen(function*() {
    const { command, expected } = commandOf(scenario)
    const timeout = scenario.stepMs / 1000
    const all: Array<string> = []
    let step = yield* streamed(rt, new CmdRunAction({ command, timeout }))
    for (let i = 1;; i++) {
      assertStepLossless(step.chunks, step.observation.content)
      all.push(...step.chunks)
      if (step.observation.exitCode !== -1) break
      assert.isBelow(i, 100, "the command ends")
      step = yield* streamed(rt, stepAction(scenario, i, timeout))
    }
    assertNewlinesWithLines(all)
    const output = all.join("")
    if (scenario.ending === "interrupt") {
      // C-c cut it somewhere: what came is a beginning of its output, then the echoed ^C.
      const cut = output.indexOf("^C")
      assert.isAtLeast(cut, 0, "the ^C is echoed")
      assert.isTrue(expected.startsWith(output.slice(0, cut)), "the output before ^C is a prefix of the whole")
    } else {
      assert.strictEqual(output, expected)
    }
  })

/**
 * One runtime for every run (each scenario ends with its command ended, so the session is idle for
 * the next), so the runs cost the steps, not a server start each.
 */
export const streamPropertyConformance = (target: ConformanceTarget) =>
  describe("runStream (property)", () => {
    const runtime = ManagedRuntime.make((target.toolless ?? target).layer({ noChangeTimeoutSeconds: 0.3 }))
    afterAll(() => runtime.dispose())

    it.live.prop(
      "each step's chunks join to its content, and all steps' chunks to the command's output",
      [Scenario],
      ([scenario]) => Effect.promise(() => runtime.runPromise(Effect.flatMap(Runtime, (rt) => run(rt, scenario)))),
      { timeout: 60_000, arbitrary: { runs: 8, maxShrinks: 20 } }
    )
  })
