/**
 * Baselines measured in the same process as the runtime: a fresh `bash -c` per
 * command (what OpenHands' CLIRuntime does), and one persistent bash on a pipe
 * answering a marker (the floor any shell-backed runtime can reach).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"

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
