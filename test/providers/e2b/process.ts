/**
 * envd's `process.Process` service over `docker exec`: `Start` streams the process's events
 * (start with its pid inside the container, stdout/stderr data as base64 bytes, end with the exit
 * code, keepalives at the client's `Keepalive-Ping-Interval`), `List` and `SendSignal` work by pid.
 * As envd: `Connect-Timeout-Ms` is the process's deadline (it is killed then), and a client that
 * goes away leaves the process running.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { PassThrough } from "node:stream"
import { openStream, unaryError, unaryReply } from "./connect.ts"
import { docker, execIn } from "./docker.ts"

interface ProcessConfig {
  readonly cmd: string
  readonly args?: ReadonlyArray<string>
  readonly envs?: Readonly<Record<string, string>>
  readonly cwd?: string
}

export interface StartRequest {
  readonly process: ProcessConfig
  readonly tag?: string
}

interface SignalRequest {
  readonly process?: { readonly selector?: { readonly pid?: number } }
  readonly signal?: string
}

/** What a sandbox's process service needs to know about its sandbox. */
export interface ProcessHost {
  readonly container: string
  /** pid → what it was started with, while it runs. */
  readonly processes: Map<number, StartRequest>
}

/** Prints the shell's pid (which `exec` hands to the command) on stderr first: the pid the start event reports. */
const PID_PREFIX = ["/bin/sh", "-c", "echo \"$$\" >&2; exec \"$0\" \"$@\""]

const signalName = (signal: string | undefined) => signal === "SIGNAL_SIGTERM" ? "TERM" : "KILL"

export const startProcess = async (
  host: ProcessHost,
  user: string,
  message: StartRequest,
  request: IncomingMessage,
  response: ServerResponse
) => {
  const { cmd, args = [], envs = {}, cwd } = message.process
  const exec = await docker.getContainer(host.container).exec({
    Cmd: [...PID_PREFIX, cmd, ...args],
    Env: Object.entries(envs).map(([k, v]) => `${k}=${v}`),
    User: user,
    ...(cwd === undefined || cwd === "" ? {} : { WorkingDir: cwd }),
    AttachStdout: true,
    AttachStderr: true
  })
  const output = await exec.start({ hijack: true, stdin: false })
  const stream = openStream(response)
  let pid: number | undefined
  let stderrHead = ""
  const data = (kind: "stdout" | "stderr") => (chunk: Buffer) =>
    stream.send({ event: { data: { [kind]: chunk.toString("base64") } } })
  const stdout = data("stdout")
  const stderr = data("stderr")
  const early: Array<Buffer> = []
  const out = new PassThrough()
  const err = new PassThrough()
  out.on("data", (chunk: Buffer) => pid === undefined ? early.push(chunk) : stdout(chunk))
  err.on("data", (chunk: Buffer) => {
    if (pid !== undefined) return stderr(chunk)
    stderrHead += chunk.toString("utf8")
    const newline = stderrHead.indexOf("\n")
    if (newline < 0) return
    pid = Number(stderrHead.slice(0, newline))
    host.processes.set(pid, message)
    stream.send({ event: { start: { pid } } })
    for (const held of early.splice(0)) stdout(held)
    const rest = stderrHead.slice(newline + 1)
    if (rest !== "") stderr(Buffer.from(rest, "utf8"))
  })
  docker.modem.demuxStream(output, out, err)
  const ping = Number(request.headers["keepalive-ping-interval"] ?? 0)
  const keepalive = ping > 0 ? setInterval(() => stream.send({ event: { keepalive: {} } }), ping * 1000) : undefined
  const deadlineMs = Number(request.headers["connect-timeout-ms"] ?? 0)
  const deadline = deadlineMs > 0
    ? setTimeout(() => {
      if (pid !== undefined) void execIn(host.container, ["kill", "-KILL", String(pid)], "root")
    }, deadlineMs)
    : undefined
  let ended = false
  const end = async () => {
    if (ended) return
    ended = true
    clearInterval(keepalive)
    clearTimeout(deadline)
    if (pid !== undefined) host.processes.delete(pid)
    const exitCode = await exec.inspect().then((info) => info.ExitCode ?? -1, () => -1)
    stream.send({ event: { end: { exitCode, exited: true, status: `exit status ${exitCode}` } } })
    stream.end()
  }
  output.on("end", end)
  // A container removed under a running process (a sandbox killed, or reaped) may reset the stream.
  output.on("error", end)
}

export const listProcesses = (host: ProcessHost, response: ServerResponse) =>
  unaryReply(response, {
    processes: [...host.processes].map(([pid, start]) => ({
      pid,
      config: start.process,
      ...(start.tag === undefined ? {} : { tag: start.tag })
    }))
  })

export const signalProcess = async (host: ProcessHost, message: SignalRequest, response: ServerResponse) => {
  const pid = message.process?.selector?.pid
  if (pid === undefined || !host.processes.has(pid)) {
    return unaryError(response, "not_found", `process with pid ${pid} not found`)
  }
  await execIn(host.container, ["kill", `-${signalName(message.signal)}`, String(pid)], "root")
  unaryReply(response, {})
}
