/**
 * Probes, from inside a sandbox, for the server's private variables (above all the session
 * key) in every place a sandboxed command could read them: its own `env`, the environment of
 * every process of the session in /proc (server, shells, kernel, Chromium), the kernel's
 * `os.environ`, and an MCP stdio server's environment. Shared by the Local and Docker tests.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { BrowseURLAction, IPythonRunCellAction, type RuntimeShape } from "../../src/index.ts"
import { everythingServer } from "../conformance/mcp.ts"

/** The names that must not be visible; the probe greps for them (and for the key when known). */
const PRIVATE = ["SESSION_API_KEY", "EFFECT_SANDBOX_STATE_DIR", "EFFECT_SANDBOX_SESSION_API_KEY_FD"]

/** An MCP stdio server that writes its environment to `file`, then serves as the everything server. */
export const envDumpingMcpServer = (
  file: string,
  command = everythingServer.command,
  args = everythingServer.args
) => ({
  name: "envdump",
  command: "sh",
  args: ["-c", "env > \"$0\"; exec \"$@\"", file, command, ...args],
  env: {}
})

export interface ProbeOptions {
  /**
   * The server's pid as seen inside the sandbox, when its initial environment must not hold
   * the key either.
   */
  readonly serverPid?: number
  /** The session key, when the test knows it. */
  readonly key?: string
  readonly kernel: boolean
  readonly browser: boolean
  /** Where `envDumpingMcpServer` wrote its environment (inside the sandbox). */
  readonly mcpEnvFile: string
}

/** `grep` patterns for `names` and the key. */
const patterns = (key: string | undefined, names: ReadonlyArray<string> = PRIVATE) =>
  [...names, ...(key === undefined ? [] : [key])].map((p) => `-e '${p}'`).join(" ")

/**
 * For every process of this session (marked `EFFECT_SANDBOX_SESSION=<id>/...`) and the
 * server: its marker and how many private strings its /proc environ holds.
 */
const procScan = (serverPid: number | undefined, key: string | undefined) =>
  [
    "sid=${EFFECT_SANDBOX_SESSION%%/*}",
    // The server's own configuration (state dir, key fd number) is no secret; the key is.
    serverPid === undefined ?
      "" :
      `printf 'server %s\\n' "$(tr '\\0' '\\n' < /proc/${serverPid}/environ | grep -c ${
        patterns(key, ["SESSION_API_KEY="])
      })"`,
    "for f in /proc/[0-9]*/environ; do",
    "  e=$(tr '\\0' '\\n' 2>/dev/null < \"$f\") || continue",
    "  m=$(printf '%s\\n' \"$e\" | grep \"^EFFECT_SANDBOX_SESSION=$sid/\") || continue",
    `  printf '%s %s\\n' "\${m#*/}" "$(printf '%s\\n' "$e" | grep -c ${patterns(key)})"`,
    "done"
  ].join("\n")

export const assertKeyHidden = (rt: RuntimeShape, options: ProbeOptions) =>
  Effect.gen(function*() {
    const env = yield* rt.runCommand(`env | grep -c ${patterns(options.key)}; true`)
    assert.strictEqual(env.content, "0", `the shell's env: ${env.content}`)
    if (options.kernel) {
      const cell = yield* rt.run(
        new IPythonRunCellAction({
          code: `import os; print([k for k, v in os.environ.items() if any(p in k + "=" + v for p in ${
            JSON.stringify([...PRIVATE, ...(options.key === undefined ? [] : [options.key])])
          })])`
        })
      )
      assert.include(cell.content, "[]", `the kernel's os.environ: ${cell.content}`)
    }
    if (options.browser) {
      const page = yield* rt.run(new BrowseURLAction({ url: "about:blank" }))
      assert.notStrictEqual(page._tag, "ErrorObservation", page.content)
    }
    const scan = yield* rt.runCommand(procScan(options.serverPid, options.key))
    // Processes that end during the scan leave a "No such process" line.
    const rows = scan.content.split("\n").filter((l) => /^\S+ \d+$/.test(l.trim())).map((l) => l.trim().split(" "))
    for (const [who, count] of rows) assert.strictEqual(count, "0", `/proc environ of ${who}: ${scan.content}`)
    const seen = rows.map(([who]) => who!)
    if (options.serverPid !== undefined) assert.include(seen, "server")
    assert.isTrue(seen.some((w) => /^[0-9a-f]{8}$/.test(w)), `a shell in ${seen.join(", ")}`)
    if (options.kernel) assert.isTrue(seen.some((w) => w.startsWith("kernel")), `a kernel in ${seen.join(", ")}`)
    if (options.browser) assert.isTrue(seen.some((w) => w.startsWith("browser")), `Chromium in ${seen.join(", ")}`)
    const mcp = yield* rt.runCommand(
      `grep -c ${patterns(options.key)} ${options.mcpEnvFile}; wc -l < ${options.mcpEnvFile}`
    )
    const [hits, lines] = mcp.content.split("\n")
    assert.strictEqual(hits, "0", `the MCP server's env: ${mcp.content}`)
    assert.isAbove(Number(lines), 3, "the MCP server wrote its environment")
  })
