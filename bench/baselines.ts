/**
 * Baselines measured in the same process as the runtime: a fresh `bash -c` per
 * command (what OpenHands' CLIRuntime does), and one persistent bash on a pipe
 * answering a marker (the floor any shell-backed runtime can reach).
 */
import type * as Pty from "node-pty"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { createRequire } from "node:module"
import { join } from "node:path"
import { TERMINAL_SETTINGS } from "../src/executor/shell/prompt.ts"
import { echoServer } from "./echoServer.ts"

/** Start and exit an empty Node process: the floor of any server start. */
export const nodeStart = (): Promise<void> =>
  new Promise((resolve, reject) => {
    spawn(process.execPath, ["-e", ""]).on("error", reject).on("close", () => resolve())
  })

export const bashC = (command: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command])
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d))
    child.on("error", reject).on("close", () => resolve(out))
  })

/** `bash -c` whose output is read and thrown away (for the large-output baseline). */
export const bashCDiscard = (command: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command])
    let bytes = 0
    child.stdout.on("data", (d: Buffer) => (bytes += d.length))
    child.on("error", reject).on("close", () => resolve(bytes))
  })

/**
 * `bash -c` on a bare PTY (node-pty, as the runtime's shell) set as the shell's terminal is
 * (`TERMINAL_SETTINGS`: without `-onlcr` the terminal writes each line end twice, and the
 * baseline would be twice as slow as the shell's terminal), its output counted and thrown away:
 * the floor of any output that goes through a terminal, which a pipe does not pay.
 */
export const ptyDiscard = (command: string): Promise<number> =>
  new Promise((resolve) => {
    const pty = createRequire(import.meta.url)("node-pty") as typeof Pty
    const child = pty.spawn("bash", ["-c", `stty ${TERMINAL_SETTINGS}; ${command}`], { cols: 1000, rows: 100 })
    let chars = 0
    child.onData((d) => (chars += d.length))
    child.onExit(() => resolve(chars))
  })

export class PipeShell {
  private readonly child: ChildProcessWithoutNullStreams
  private buffer = ""
  private waiting: ((out: string) => void) | null = null
  private seq = 0

  constructor() {
    this.child = spawn("bash", ["--noprofile", "--norc"])
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.buffer += d
      const marker = `__done_${this.seq}__\n`
      const at = this.buffer.indexOf(marker)
      if (at !== -1 && this.waiting !== null) {
        const out = this.buffer.slice(0, at)
        this.buffer = this.buffer.slice(at + marker.length)
        const resolve = this.waiting
        this.waiting = null
        resolve(out)
      }
    })
  }

  run(command: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = resolve
      this.seq++
      this.child.stdin.write(`${command}; echo __done_${this.seq}__\n`)
    })
  }

  close(): void {
    this.child.kill("SIGKILL")
  }
}

/**
 * A bare HTTP round trip over loopback: a small JSON POST answered with a small JSON body over a
 * kept-alive connection. What any runtime behind HTTP pays on top of the executor. The server
 * runs `in-process` (in this process, as earlier rounds measured it) or in a process of its own
 * (`own-process`), as a runtime's server does, so that each exchange also wakes another process
 * twice (on this 2-core machine ~0.06 ms more than in one process: design notes, "Eleventh round").
 */
export const loopbackHttp = async (server: "in-process" | "own-process") => {
  const { port, close: stop } = server === "in-process" ? await inProcessEcho() : await processEcho()
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const body = JSON.stringify({ action: { action: "run", args: { command: "echo hi", blocking: true } } })
  const run = () =>
    new Promise<string>((resolve, reject) => {
      const req = request({ port, host: "127.0.0.1", method: "POST", path: "/execute_action", agent }, (res) => {
        let text = ""
        res.setEncoding("utf8").on("data", (d: string) => (text += d)).on("end", () => resolve(text))
      })
      req.on("error", reject).end(body)
    })
  const close = () => {
    agent.destroy()
    stop()
  }
  return { run, close }
}

const inProcessEcho = async () => {
  const { port, server } = await echoServer()
  return { port, close: () => server.close() }
}

/** bench/echoServer.ts as a program: its port, and how to end it. */
const processEcho = () =>
  new Promise<{ readonly port: number; readonly close: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "echoServer.ts")], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    // A server that fails before its port fails the baseline; after it (its end at `close`), the promise has settled.
    child.on("error", reject).on("exit", (code) => reject(new Error(`bench/echoServer.ts exited ${code}`)))
    child.stdout.setEncoding("utf8").once("data", (line: string) =>
      resolve({ port: Number(line.trim()), close: () => child.stdin.end() }))
  })
