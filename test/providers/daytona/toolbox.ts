/**
 * The stand-in's toolbox: the endpoints of Daytona's in-sandbox daemon that the SDK calls in our
 * flows (`/process/execute`, `/process/session[...]`, `/files/bulk-upload`), reached as the SDK
 * reaches them, at `{toolboxProxyUrl}/{sandboxId}/...`. Where the daemon runs inside the sandbox,
 * the stand-in runs `docker exec` as the sandbox's user, with the same request and response bodies:
 * `/process/execute` a fresh `sh -c` each, a session's commands inside that session's one shell
 * (sessionShell.ts), as the daemon runs them.
 */
import type Docker from "dockerode"
import type { IncomingMessage } from "node:http"
import { PassThrough, Readable } from "node:stream"
import { pack } from "tar-stream"
import { ApiError, docker, type StandInSandbox } from "./sandboxes.ts"
import { SessionShell } from "./sessionShell.ts"

/** A session: its shell, and the commands written into it (id -> command). */
interface Session {
  readonly shell: SessionShell
  readonly commands: Map<string, string>
}

/** `sh -c command` as the sandbox user, its output collected as it comes. */
const run = async (sandbox: StandInSandbox, command: string, env: Record<string, string> = {}, cwd?: string) => {
  const exec = await sandbox.container!.exec({
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
  private readonly sessions = new Map<string, Session>()

  /** Sessions live in the daemon's memory: a sandbox started again (a new `generation`) has none. */
  private key(sandbox: StandInSandbox, id: string) {
    return `${sandbox.id}/${sandbox.generation}/${id}`
  }

  private session(sandbox: StandInSandbox, id: string) {
    const found = this.sessions.get(this.key(sandbox, id))
    if (found === undefined) throw new ApiError(404, "session not found")
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
      const key = this.key(sandbox, sessionId)
      if (this.sessions.has(key)) throw new ApiError(409, "session already exists")
      this.sessions.set(key, { shell: await SessionShell.open(sandbox, sessionId), commands: new Map() })
      return { status: 201, body: "" }
    }
    const exec = /^\/process\/session\/([^/]+)\/exec$/.exec(rest)
    if (method === "POST" && exec !== null) {
      const session = this.session(sandbox, decodeURIComponent(exec[1]!))
      const { command, runAsync, async } = await body() as { command: string; runAsync?: boolean; async?: boolean }
      const id = await session.shell.execute(command)
      session.commands.set(id, command)
      if (runAsync === true || async === true) return { status: 202, body: { cmdId: id } }
      const exitCode = await session.shell.wait(id)
      if (exitCode === undefined) throw new ApiError(400, "session cancelled")
      const logs = await session.shell.logs(id)
      return { status: 200, body: { cmdId: id, exitCode, ...logs } }
    }
    const command = /^\/process\/session\/([^/]+)\/command\/([^/]+)(\/logs)?$/.exec(rest)
    if (method === "GET" && command !== null) {
      const session = this.session(sandbox, decodeURIComponent(command[1]!))
      const id = command[2]!
      const found = session.commands.get(id)
      if (found === undefined) throw new ApiError(404, "command not found")
      return command[3] === undefined
        ? { status: 200, body: { id, command: found, exitCode: session.shell.exitCode(id) } }
        : { status: 200, body: await session.shell.logs(id) }
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
    await sandbox.container!.putArchive(tar as unknown as NodeJS.ReadableStream, { path: "/" })
  }
}
