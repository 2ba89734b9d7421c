import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import { Runtime, type RuntimeShape } from "../../src/index.ts"
import type { ConformanceTarget } from "./target.ts"

/** OpenHands' TIMEOUT_MESSAGE_TEMPLATE, spelled out here so the tests pin it independently of the source. */
export const TIMEOUT_TEMPLATE =
  "You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to interrupt/kill the previous command before sending your new command, or use the timeout parameter in execute_bash for future commands."

/**
 * Run `f` against a fresh runtime of `target`, released afterwards.
 *
 * The no-change timeout is generous unless a case asks for a short one: on a loaded machine a prompt
 * can take over a second to come back, and a soft time-out there refuses the case's next command.
 */
export const withRuntime = <A, E>(
  target: ConformanceTarget,
  f: (rt: RuntimeShape) => Effect.Effect<A, E>,
  noChangeTimeoutSeconds = 30
) =>
  Effect.gen(function*() {
    return yield* f(yield* Runtime)
  }).pipe(Effect.provide(Layer.fresh(target.layer({ noChangeTimeoutSeconds }))))

/** Host processes whose command line contains `pattern` (every runtime here runs on this machine's kernel). */
export const hostProcesses = (pattern: string): Array<string> => {
  const out = spawnSync("pgrep", ["-af", pattern], { encoding: "utf8" }).stdout
  return out.split("\n").filter((line) => line.trim() !== "" && !line.includes("pgrep"))
}

/** Poll (every 50 ms, up to 5 s) until exactly `count` host processes match `pattern`. */
export const awaitProcessCount = (pattern: string, count: number) =>
  Effect.gen(function*() {
    for (let waited = 0; waited < 5_000; waited += 50) {
      if (hostProcesses(pattern).length === count) return
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`expected ${count} processes matching "${pattern}": ${hostProcesses(pattern)}`))
  })

/** A number unique to one test, to find the processes it started. */
export const uniqueSeconds = () => `${900 + Math.floor(Math.random() * 99)}.${Math.floor(Math.random() * 1e6)}`
