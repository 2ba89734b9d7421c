/**
 * The stand-in's toolbox: the endpoints of Daytona's in-sandbox daemon that the SDK calls in our
 * flows (`/process/execute`, `/process/session[...]`, `/files/bulk-upload`), reached as the SDK
 * reaches them, at `{toolboxProxyUrl}/{sandboxId}/...`. Where the daemon runs inside the sandbox,
 * the stand-in runs `docker exec` as the sandbox's user, with the same request and response bodies.
 */
import type Docker from "dockerode"
import { randomUUID } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { PassThrough, Readable } from "node:stream"
import { pack } from "tar-stream"
import { ApiError, docker, type StandInSandbox } from "./sandboxes.ts"

/** A session command, as `GET /process/session/{id}/command/{cmdId}` reports it. */
interface SessionCommand {
  readonly id: string
  readonly command: string
  exitCode: number | undefined
  stdout: string
  stderr: string
  output: string
  readonly done: Promise<void>
}

/** `sh -c command` as the sandbox user, its output collected as it comes. */
const run = async (sandbox: StandInSandbox, command: string, env: Record<string, string> = {}, cwd?: string) => {
  const exec = await sandbox.container.exec({
    Cmd: ["sh", "-c", command],
    User: sandbox.user,
    AttachStdout: true,
    AttachStderr: true,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    ...(cwd === undefined ? {} : { WorkingDir: cwd })
  })
  const stream = await exec.start({ hijack: true, stdin: false })
  const record = { stdout: "", stderr: "", output: "", exitCode: undefined as number | undefined }
  const out = new PassThrough()
  const err = new PassThrough()
  out.on("data", (chunk: Buffer) => {
    record.stdout += chunk.toString("utf8")
    record.output += chunk.toString("utf8")
  })
  err.on("data", (chunk: Buffer) => {
    record.stderr += chunk.toString("utf8")
    record.output += chunk.toString("utf8")
  })
  docker.modem.demuxStream(stream, out, err)
  const done = new Promise<void>((resolve) => {
    // A container stopped or removed under the command resets its stream: the command ended with it.
    stream.on("error", () => {
      record.exitCode ??= -1
      resolve()
    })
    stream.on("end", () =>
      void exec.inspect().then((info: Docker.ExecInspectInfo) => {
        record.exitCode = info.ExitCode ?? -1
        resolve()
      }, () => {
        record.exitCode = -1
        resolve()
      }))
  })
  return { record, done }
}

/** The uid of the sandbox user, for the files the daemon (running as that user) writes. */
const uidOf = async (sandbox: StandInSandbox): Promise<number> => {
  const { record, done } = await run(sandbox, "id -u")
  await done
  return Number(record.stdout.trim())
}

export class Toolbox {
  private readonly sessions = new Map<string, Map<string, SessionCommand>>()

  private session(sandbox: StandInSandbox, id: string) {
    const found = this.sessions.get(`${sandbox.id}/${id}`)
    if (found === undefined) throw new ApiError(404, `session ${id} not found`)
    return found
  }

  /** Answer a toolbox request (`rest` is the path after `/{sandboxId}`); undefined when not one of ours. */
  async handle(
    sandbox: StandInSandbox,
    method: string,
    rest: string,
    request: IncomingMessage,
    body: () => Promise<unknown>
  ): Promise<{ status: number; body: unknown } | undefined> {
    if (sandbox.state !== "started") throw new ApiError(409, `Sandbox ${sandbox.id} is not started`)
    if (method === "POST" && rest === "/process/execute") {
      const { command, cwd, envs } = await body() as { command: string; cwd?: string; envs?: Record<string, string> }
      const { record, done } = await run(sandbox, command, envs, cwd)
      await done
      return { status: 200, body: { exitCode: record.exitCode, result: record.output } }
    }
    if (method === "POST" && rest === "/process/session") {
      const { sessionId } = await body() as { sessionId: string }
      if (this.sessions.has(`${sandbox.id}/${sessionId}`)) {
        throw new ApiError(409, `session ${sessionId} already exists`)
      }
      this.sessions.set(`${sandbox.id}/${sessionId}`, new Map())
      return { status: 201, body: "" }
    }
    const exec = /^\/process\/session\/([^/]+)\/exec$/.exec(rest)
    if (method === "POST" && exec !== null) {
      const commands = this.session(sandbox, decodeURIComponent(exec[1]!))
      const { command, runAsync, async } = await body() as { command: string; runAsync?: boolean; async?: boolean }
      const { record, done } = await run(sandbox, command)
      const id = randomUUID()
      const entry: SessionCommand = {
        id,
        command,
        done,
        get exitCode() {
          return record.exitCode
        },
        get stdout() {
          return record.stdout
        },
        get stderr() {
          return record.stderr
        },
        get output() {
          return record.output
        }
      } as SessionCommand
      commands.set(id, entry)
      if (runAsync === true || async === true) return { status: 202, body: { cmdId: id } }
      await done
      return {
        status: 200,
        body: {
          cmdId: id,
          exitCode: record.exitCode,
          output: record.output,
          stdout: record.stdout,
          stderr: record.stderr
        }
      }
    }
    const command = /^\/process\/session\/([^/]+)\/command\/([^/]+)(\/logs)?$/.exec(rest)
    if (method === "GET" && command !== null) {
      const found = this.session(sandbox, decodeURIComponent(command[1]!)).get(command[2]!)
      if (found === undefined) throw new ApiError(404, `command ${command[2]} not found`)
      return command[3] === undefined
        ? { status: 200, body: { id: found.id, command: found.command, exitCode: found.exitCode } }
        : { status: 200, body: { output: found.output, stdout: found.stdout, stderr: found.stderr } }
    }
    if (method === "POST" && rest === "/files/bulk-upload") {
      await this.upload(sandbox, request)
      return { status: 200, body: "" }
    }
    return undefined
  }

  /** The multipart form the SDK sends (`files[i].path`, `files[i].file`), written as the sandbox user. */
  private async upload(sandbox: StandInSandbox, request: IncomingMessage) {
    const form = await new Request("http://standin/upload", {
      method: "POST",
      headers: request.headers as Record<string, string>,
      body: Readable.toWeb(request) as ReadableStream,
      duplex: "half"
    } as RequestInit).formData()
    const uid = await uidOf(sandbox)
    const tar = pack()
    for (let i = 0; form.has(`files[${i}].path`); i++) {
      const path = String(form.get(`files[${i}].path`))
      const file = form.get(`files[${i}].file`) as File
      tar.entry({ name: path.replace(/^\/+/, ""), mode: 0o644, uid, gid: uid }, Buffer.from(await file.arrayBuffer()))
    }
    tar.finalize()
    await sandbox.container.putArchive(tar as unknown as NodeJS.ReadableStream, { path: "/" })
  }

  /** Forget the sessions of a sandbox that stopped (they lived in its daemon's memory). */
  forget(sandbox: StandInSandbox) {
    for (const key of this.sessions.keys()) if (key.startsWith(`${sandbox.id}/`)) this.sessions.delete(key)
  }
}
