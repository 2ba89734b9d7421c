/**
 * The `effect-sandbox` CLI (from source) on a pseudo-terminal, as a user at a terminal runs it:
 * everything it printed so far, and how it exited. Killed when the scope closes if still running.
 */
import { Effect } from "effect"
import type * as Pty from "node-pty"
import { createRequire } from "node:module"
import { join } from "node:path"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")
const pty = createRequire(import.meta.url)("node-pty") as typeof Pty

export const cliOnPty = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const term = pty.spawn(process.execPath, [CLI, ...args], {
        cols: 200,
        rows: 50,
        cwd: process.cwd(),
        env: process.env
      })
      const session = { term, output: "", exit: undefined as number | undefined }
      term.onData((data) => (session.output += data))
      term.onExit(({ exitCode }) => (session.exit = exitCode))
      return session
    }),
    (session) => Effect.sync(() => session.exit === undefined && session.term.kill())
  )
