/**
 * One IPython kernel (ipykernel) spoken to directly over ZeroMQ, as the Jupyter
 * protocol defines it: no jupyter_server or gateway in between (5 ms a cell,
 * where OpenHands' WebSocket path takes ~48 ms). Sockets use the `ipc://`
 * transport in a private directory, so no TCP port is opened or probed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Dealer, Subscriber } from "zeromq"
import { killProcessGroup, SESSION_MARKER_VARIABLE } from "../shell/processTree.ts"
import { type Message, Signer } from "./messages.ts"

export interface KernelOptions {
  /** The Python that has ipykernel (Debian: /usr/bin/python3). */
  readonly python: string
  /** Private directory for the connection file and sockets. */
  readonly stateDir: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Marks the kernel process for reaping, like the shells. */
  readonly marker: string
}

type Collector = (message: Message) => void

export class KernelProcess {
  private readonly child: ChildProcess
  /** Its connection file and sockets: not removed by `close` (a sync removal would block), by `closeKernel`. */
  readonly dir: string
  private readonly shell: Dealer
  private readonly iopub: Subscriber
  private readonly signer: Signer
  private readonly collectors = new Map<string, Collector>()
  private exited = false
  private closed = false
  private stderr = ""
  /** How the process ended, when it did (`exited with code 1`, `spawn ... ENOENT`): the reason when stderr is empty. */
  private ending = ""

  /** Starts a kernel; ZeroMQ's native addon is loaded then, not when a server without IPython starts. */
  static async start(options: KernelOptions): Promise<KernelProcess> {
    return new KernelProcess(options, await import("zeromq"))
  }

  private constructor(options: KernelOptions, zmq: typeof import("zeromq")) {
    this.shell = new zmq.Dealer()
    this.iopub = new zmq.Subscriber()
    this.dir = mkdtempSync(join(options.stateDir, "kernel-"))
    const key = randomBytes(32).toString("hex")
    this.signer = new Signer(key)
    const base = join(this.dir, "k")
    writeFileSync(
      join(this.dir, "connection.json"),
      JSON.stringify({
        transport: "ipc",
        ip: base,
        shell_port: 1,
        iopub_port: 2,
        stdin_port: 3,
        control_port: 4,
        hb_port: 5,
        key,
        signature_scheme: "hmac-sha256",
        kernel_name: "python3"
      }),
      { mode: 0o600 }
    )
    this.child = spawn(
      options.python,
      ["-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", join(this.dir, "connection.json")],
      {
        cwd: options.cwd,
        detached: true,
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          ...options.env,
          PYDEVD_DISABLE_FILE_VALIDATION: "1",
          [SESSION_MARKER_VARIABLE]: options.marker
        }
      }
    )
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-4096)))
    this.child.on("exit", (code, signal) => {
      this.exited = true
      this.ending ||= signal === null ? `exited with code ${code}` : `killed by ${signal}`
      for (const collect of this.collectors.values()) collect(DIED)
    })
    this.child.on("error", (error) => {
      this.exited = true
      this.ending = error.message
    })
    this.shell.connect(`ipc://${base}-1`)
    this.iopub.connect(`ipc://${base}-2`)
    this.iopub.subscribe()
    void this.route(this.shell)
    void this.route(this.iopub)
  }

  /** False once the process exited or was closed (killed), before its exit is reported. */
  get isAlive(): boolean {
    return !this.exited && !this.closed
  }

  /** The kernel's last words, for errors; how it ended when it said nothing (a missing interpreter). */
  get log(): string {
    return this.stderr.trim() || this.ending || "no output"
  }

  /** Hand every message to the collector of the request it answers. */
  private async route(socket: Dealer | Subscriber): Promise<void> {
    try {
      for await (const frames of socket) {
        const message = this.signer.decode(frames as Array<Buffer>)
        const parent = message?.parentHeader.msg_id
        if (message !== null && parent !== undefined) this.collectors.get(parent)?.(message)
      }
    } catch {
      // the socket was closed
    }
  }

  /**
   * Send a shell request and collect its messages until `done` says so (or the kernel dies);
   * `onMessage` sees each as it arrives.
   */
  request(
    msgType: string,
    content: Record<string, unknown>,
    done: (message: Message) => boolean,
    onMessage?: (message: Message) => void
  ): Promise<Array<Message>> {
    const { frames, id } = this.signer.encode(msgType, content)
    return new Promise((resolve) => {
      const messages: Array<Message> = []
      this.collectors.set(id, (message) => {
        if (message !== DIED) {
          messages.push(message)
          onMessage?.(message)
        }
        if (message === DIED || done(message)) {
          this.collectors.delete(id)
          resolve(messages)
        }
      })
      if (!this.isAlive) this.collectors.get(id)!(DIED)
      else void this.shell.send(frames)
    })
  }

  /**
   * Wait until the kernel answers *and* its iopub messages reach us. A SUB socket
   * drops what is published before its subscription is connected (ZeroMQ's slow
   * joiner), so, as jupyter_client does, probe until a status message arrives.
   */
  async waitReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline && !this.exited) {
      const { frames, id } = this.signer.encode("kernel_info_request", {})
      const seen = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.collectors.delete(id)
          resolve(false)
        }, 250)
        this.collectors.set(id, (message) => {
          if (message !== DIED && message.header.msg_type !== "status") return
          clearTimeout(timer)
          this.collectors.delete(id)
          resolve(message !== DIED)
        })
        void this.shell.send(frames)
      })
      if (seen) return true
    }
    return false
  }

  /**
   * Run code; resolves when the kernel is idle again. `stop_on_error` is off: with it on, a cell
   * that raised (a timed-out cell's KeyboardInterrupt included) makes ipykernel abort every request
   * that reaches it before its next loop turn, so a cell sent the moment the error reply came back
   * was answered "aborted", with no output (seen as a flaky "no output" after an interrupt).
   * We send one request at a time, so there is no queue the flag could protect.
   */
  execute(code: string, silent: boolean, onMessage?: (message: Message) => void): Promise<Array<Message>> {
    return this.request(
      "execute_request",
      { code, silent, store_history: !silent, user_expressions: {}, allow_stdin: false, stop_on_error: false },
      (m) => m.header.msg_type === "status" && m.content["execution_state"] === "idle",
      onMessage
    )
  }

  /** Interrupt the running cell (KeyboardInterrupt in the kernel), as Jupyter's signal interrupt mode. */
  interrupt(): void {
    if (!this.exited && this.child.pid !== undefined) process.kill(this.child.pid, "SIGINT")
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const socket of [this.shell, this.iopub]) socket.close()
    if (!this.exited && this.child.pid !== undefined) killProcessGroup(this.child.pid)
  }
}

/** Delivered to every waiting request when the kernel process exits. */
const DIED: Message = {
  header: { msg_id: "", msg_type: "died", session: "", username: "", date: "", version: "" },
  parentHeader: {},
  metadata: {},
  content: {}
}

/** True for the marker message a dead kernel sends its waiting requests. */
export const isDeath = (messages: ReadonlyArray<Message>, kernel: KernelProcess): boolean =>
  !kernel.isAlive && !messages.some((m) => m.header.msg_type === "status" && m.content["execution_state"] === "idle")
