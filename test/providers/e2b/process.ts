/**
 * envd's `process.Process` service, its processes started by the sandbox's spawner (spawner.ts):
 * `Start` streams the process's events (start with its pid inside the container, stdout/stderr data
 * as base64 bytes, end with the exit code once its output has ended, keepalives at the client's
 * `Keepalive-Ping-Interval`), `List` and `SendSignal` work by pid. As envd: `Connect-Timeout-Ms`
 * is the process's deadline (it is killed then), and a client that goes away leaves the process
 * running.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Spawned, Spawner } from "../spawner.ts"
import { openStream, unaryError, unaryReply } from "./connect.ts"

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
  readonly spawner: Spawner
  /** pid → what it was started with, while it runs. */
  readonly processes: Map<number, StartRequest>
}

const signalName = (signal: string | undefined) => signal === "SIGNAL_SIGTERM" ? "TERM" : "KILL"

export const startProcess = async (
  host: ProcessHost,
  user: string,
  message: StartRequest,
  request: IncomingMessage,
  response: ServerResponse
) => {
  const { cmd, args = [], envs = {}, cwd } = message.process
  const stream = openStream(response)
  const refuse = (error: Error) => {
    stream.end({ code: "invalid_argument", message: error.message })
    return undefined
  }
  let spawned: Spawned
  try {
    spawned = host.spawner.start({ argv: [cmd, ...args], user, env: envs, cwd })
  } catch (error) {
    return refuse(error as Error)
  }
  const pid = await spawned.pid.catch(refuse)
  if (pid === undefined) return
  host.processes.set(pid, message)
  stream.send({ event: { start: { pid } } })
  const data = (kind: "stdout" | "stderr") => (chunk: Buffer) =>
    stream.send({ event: { data: { [kind]: chunk.toString("base64") } } })
  spawned.stdout.on("data", data("stdout"))
  spawned.stderr.on("data", data("stderr"))
  const ping = Number(request.headers["keepalive-ping-interval"] ?? 0)
  const keepalive = ping > 0 ? setInterval(() => stream.send({ event: { keepalive: {} } }), ping * 1000) : undefined
  const deadlineMs = Number(request.headers["connect-timeout-ms"] ?? 0)
  const deadline = deadlineMs > 0
    ? setTimeout(() => void host.spawner.run(["kill", "-KILL", String(pid)], "root"), deadlineMs)
    : undefined
  // Its end once it exited and its output ended (a container removed under it ends both, at -1).
  const exitCode = await spawned.ended
  clearInterval(keepalive)
  clearTimeout(deadline)
  host.processes.delete(pid)
  stream.send({ event: { end: { exitCode, exited: true, status: `exit status ${exitCode}` } } })
  stream.end()
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
  await host.spawner.run(["kill", `-${signalName(message.signal)}`, String(pid)], "root")
  unaryReply(response, {})
}
