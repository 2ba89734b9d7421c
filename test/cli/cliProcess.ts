/**
 * The `effect-sandbox` CLI (from source) as a child process run to its end, asynchronously: the
 * stand-ins the provider tests start answer from the test's own process, which a blocking spawn
 * would freeze.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts")

/** Run the CLI with `args` and `env`: its stdout, stderr and exit code. */
export const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ stdout: string; stderr: string; status: number | null }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env, timeout: 240_000 },
      (error, stdout, stderr) =>
        resolve({ stdout, stderr, status: error === null ? 0 : typeof error.code === "number" ? error.code : null })
    )
  })
