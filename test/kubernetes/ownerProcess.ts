/**
 * An owner in a process of its own (a script of fixtures/), for the tests that kill one: started
 * until it prints `READY <word>`, SIGKILLed with the scope at the latest. SIGKILL runs no
 * finalizer: what the owner made stays, as after a crash.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join, resolve } from "node:path"

const NODE = join(import.meta.dirname, "..", "..", "node_modules", ".bin", "node")

/** Run `fixtures/<script>` (or `script`, when absolute) with `args` until READY: the process and the word after READY. */
export const ownerProcess = (script: string, args: ReadonlyArray<string>, timeout: `${number} seconds`) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly child: ChildProcess; readonly ready: string }, Error>((resume) => {
      const child = spawn(NODE, [resolve(import.meta.dirname, "fixtures", script), ...args], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const ready = /READY (\S+)/.exec(output)
        if (ready !== null) resume(Effect.succeed({ child, ready: ready[1]! }))
      }
      child.stdout!.on("data", onData)
      child.stderr!.on("data", onData)
      child.on("exit", (code) => resume(Effect.fail(new Error(`owner exited (${code}) before READY:\n${output}`))))
    }).pipe(Effect.timeout(timeout)),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

/** SIGKILL the owner and wait until it is gone. */
export const killed = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })
