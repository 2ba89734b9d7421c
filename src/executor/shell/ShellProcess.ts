/**
 * One bash process on a PTY, turned into three events: output text, a prompt
 * (the previous command finished), and exit. Knows nothing of actions.
 */
import * as pty from "node-pty"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
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
}

export interface ShellEvents {
  readonly onOutput: (text: string) => void
  readonly onPrompt: (metadata: PromptMetadata) => void
  readonly onExit: (exitCode: number) => void
}

export class ShellProcess {
  private readonly pty: pty.IPty
  private readonly marker: string
  private exited = false

  constructor(options: ShellProcessOptions, events: ShellEvents) {
    const markers = makeMarkers()
    const rcFile = join(options.stateDir, "bashrc")
    writeFileSync(rcFile, shellRcScript(markers, { loadUserRc: options.loadUserRc }), { mode: 0o600 })
    const scanner = new PromptScanner(markers)
    const decoder = new TerminalTextDecoder()
    this.pty = pty.spawn(options.shellPath, ["--noprofile", "--rcfile", rcFile, "--noediting", "-i"], {
      name: "xterm-256color",
      // Wide like OpenHands' tmux window, so lines are not wrapped by programs that ask.
      cols: 1000,
      rows: 100,
      cwd: options.cwd,
      env: { ...options.env, [SESSION_MARKER_VARIABLE]: options.marker }
    })
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

  write(data: string): void {
    if (!this.exited) this.pty.write(data)
  }

  /** Kill bash and everything it started (its session and marked processes). */
  kill(): void {
    killSession(this.pty.pid, this.marker)
    try {
      this.pty.kill("SIGKILL")
    } catch {
      // already gone
    }
  }
}
