/**
 * One bash process on a PTY, turned into three events: output text, a prompt
 * (the previous command finished), and exit. Knows nothing of actions.
 */
import type * as Pty from "node-pty"
import { writeFileSync, writeSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { makeShellCgroup, type ShellCgroup } from "./cgroup.ts"
import { killSession, SESSION_MARKER_VARIABLE } from "./processTree.ts"
import { makeMarkers, type PromptMetadata, PromptScanner, shellRcScript } from "./prompt.ts"
import { TerminalTextDecoder } from "./terminalText.ts"

export interface ShellProcessOptions {
  readonly cwd: string
  /** Private directory for the rc file. */
  readonly stateDir: string
  readonly shellPath: string
  readonly env: Readonly<Record<string, string>>
  /** Identifies this session's processes for reaping (see processTree.ts). */
  readonly marker: string
  readonly loadUserRc: boolean
  /** Most processes the runtime's shells may have at once, where a pids cgroup is available (see cgroup.ts). */
  readonly pidsLimit: number
}

export interface ShellEvents {
  readonly onOutput: (text: string) => void
  readonly onPrompt: (metadata: PromptMetadata) => void
  readonly onExit: (exitCode: number) => void
}

/**
 * node-pty is a native addon: it is loaded by the first shell, not when the package is imported,
 * so a program that only imports `effect-sandbox` (schemas, TestRuntime) loads no `pty.node`
 * (DESIGN.md principle 11). `require` because the constructor below is synchronous.
 */
let ptyModule: typeof Pty | undefined
const loadPty = (): typeof Pty => ptyModule ??= createRequire(import.meta.url)("node-pty") as typeof Pty

export class ShellProcess {
  private readonly pty: Pty.IPty
  private readonly marker: string
  private readonly cgroup: ShellCgroup | null
  private exited = false
  /** Whether node-pty's own (asynchronous) write queue ever took bytes: later writes must then queue behind them. */
  private queuing = false

  constructor(options: ShellProcessOptions, events: ShellEvents) {
    const markers = makeMarkers()
    const rcFile = join(options.stateDir, "bashrc")
    writeFileSync(
      rcFile,
      shellRcScript(markers, {
        loadUserRc: options.loadUserRc,
        idleFifo: join(options.stateDir, "idle.fifo")
      }),
      { mode: 0o600 }
    )
    const scanner = new PromptScanner(markers)
    const decoder = new TerminalTextDecoder()
    const cgroup = makeShellCgroup(options.marker, options.pidsLimit)
    const bash = [options.shellPath, "--noprofile", "--rcfile", rcFile, "--noediting", "-i"]
    try {
      this.pty = loadPty().spawn(...joiningCgroup(cgroup, bash), {
        name: "xterm-256color",
        // Wide like OpenHands' tmux window, so lines are not wrapped by programs that ask.
        cols: 1000,
        rows: 100,
        cwd: options.cwd,
        env: { ...options.env, [SESSION_MARKER_VARIABLE]: options.marker }
      })
    } catch (cause) {
      cgroup?.destroy()
      throw cause
    }
    this.cgroup = cgroup
    this.pty.onData((data) => {
      for (const item of scanner.feed(decoder.feed(data))) {
        if (item._tag === "Output") events.onOutput(item.text)
        else events.onPrompt(item.metadata)
      }
    })
    this.pty.onExit(({ exitCode }) => {
      this.exited = true
      events.onExit(exitCode)
    })
    this.marker = options.marker
  }

  get pid(): number {
    return this.pty.pid
  }

  get isAlive(): boolean {
    return !this.exited
  }

  /**
   * Write to the PTY at once when it takes the bytes (its fd is non-blocking): node-pty's write
   * goes through the thread pool, ~30 µs of every command. What the PTY does not take now (its
   * buffer full, an error) goes to node-pty's queue, and so does everything after it, in order.
   */
  write(data: string): void {
    if (this.exited) return
    let rest: string | Buffer = data
    if (!this.queuing) {
      const bytes = Buffer.from(data)
      let written = 0
      try {
        written = writeSync((this.pty as unknown as { readonly fd: number }).fd, bytes)
      } catch {
        // EAGAIN (full) or the shell gone: node-pty retries or reports it, as before
      }
      if (written === bytes.length) return
      rest = bytes.subarray(written)
      this.queuing = true
    }
    this.pty.write(rest)
  }

  /** How many forks the session's pids limit has refused so far (0 without a limit). */
  limitHits(): number {
    return this.cgroup?.limitHits() ?? 0
  }

  /** The session's process limit, or null where it has none. */
  get pidsLimit(): number | null {
    return this.cgroup?.pidsLimit ?? null
  }

  /** Kill bash and everything it started: its cgroup, else its session, descendants and marked processes. */
  kill(): void {
    killSession(this.pty.pid, this.marker)
    this.cgroup?.destroy()
    try {
      this.pty.kill("SIGKILL")
    } catch {
      // already gone
    }
  }
}

/**
 * The command that starts `argv` already inside `cgroup`: a tiny sh writes its
 * own pid to each `cgroup.procs` and execs bash, so not even bash's first child
 * is forked outside it. Paths are ours (no quotes in them). A failed write leaves
 * the shell outside the cgroup, and the process table still finds it.
 */
export const joiningCgroup = (cgroup: ShellCgroup | null, argv: ReadonlyArray<string>): [string, Array<string>] => {
  if (cgroup === null) return [argv[0]!, argv.slice(1)]
  const joins = cgroup.procsFiles.map((file) => `echo $$ > '${file}' 2>/dev/null;`).join(" ")
  return ["/bin/sh", ["-c", `${joins} exec "$0" "$@"`, ...argv]]
}
