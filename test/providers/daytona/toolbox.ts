/**
 * The stand-in's toolbox: the endpoints of Daytona's in-sandbox daemon that the SDK calls in our
 * flows (`/process/execute`, `/process/session[...]`, `/files/bulk-upload`), reached as the SDK
 * reaches them, at `{toolboxProxyUrl}/{sandboxId}/...`. Where the daemon runs inside the sandbox,
 * the stand-in starts processes through the sandbox's spawner (../spawner.ts) as the sandbox's
 * user, in milliseconds as the daemon does, with the same request and response bodies:
 * `/process/execute` a fresh `sh -c` each, a session's commands inside that session's one shell
 * (sessionShell.ts), as the daemon runs them.
 */
import type { IncomingMessage } from "node:http"
import { type Duplex, Readable } from "node:stream"
import { pack } from "tar-stream"
import { WebSocketServer } from "ws"
import { ApiError, type StandInSandbox } from "./sandboxes.ts"
import { SessionShell } from "./sessionShell.ts"

/** A session: its shell, and the commands written into it (id -> command). */
interface Session {
  readonly shell: SessionShell
  readonly commands: Map<string, string>
}

/** `sh -c command` as the sandbox user, its output collected as it comes. */
const run = async (sandbox: StandInSandbox, command: string, env: Record<string, string> = {}, cwd?: string) => {
  const spawned = sandbox.spawner.start({ argv: ["sh", "-c", command], user: sandbox.user, env, cwd })
  await spawned.pid
  const record = { stdout: "", stderr: "", output: "", exitCode: undefined as number | undefined }
  spawned.stdout.on("data", (chunk: Buffer) => {
    record.stdout += chunk.toString("utf8")
    record.output += chunk.toString("utf8")
  })
  spawned.stderr.on("data", (chunk: Buffer) => {
    record.stderr += chunk.toString("utf8")
    record.output += chunk.toString("utf8")
  })
  // A container stopped or removed under the command ends it at -1.
  const done = spawned.ended.then((exitCode) => {
    record.exitCode = exitCode
  })
  return { record, done }
}

/** The uid of the sandbox user, for the files the daemon (running as that user) writes. */
const uidOf = async (sandbox: StandInSandbox): Promise<number> => {
  const { record, done } = await run(sandbox, "id -u")
  await done
  return Number(record.stdout.trim())
}

/** How much of the log the daemon reads, and so sends, at once. */
const DAEMON_READ_BYTES = 1024
/** The daemon checks for a followed command's exit code after 50 reads 20 ms apart found nothing new. */
const EXIT_NOTICED_AFTER_MS = 1000

export class Toolbox {
  private readonly sessions = new Map<string, Session>()
  private readonly sockets = new WebSocketServer({ noServer: true })

  /** Sessions live in the daemon's memory: a sandbox started again (a new `generation`) has none. */
  private key(sandbox: StandInSandbox, id: string) {
    return `${sandbox.id}/${sandbox.generation}/${id}`
  }

  private session(sandbox: StandInSandbox, id: string) {
    const found = this.sessions.get(this.key(sandbox, id))
    if (found === undefined) throw new ApiError(404, "session not found")
    return found
  }

  /** A session's command, else the daemon's 404s (the session's first). */
  private command(sandbox: StandInSandbox, sessionId: string, id: string) {
    const session = this.session(sandbox, decodeURIComponent(sessionId))
    const found = session.commands.get(id)
    if (found === undefined) throw new ApiError(404, "command not found")
    return { session, id, found }
  }

  /**
   * A WebSocket to `/process/session/{id}/command/{cid}/logs` (`follow=true` to follow), as the
   * daemon serves it (apps/daemon/pkg/session/log.go): its refusals as HTTP answers before the
   * upgrade (409 for a sandbox not started, 404 `session not found` / `command not found`), then
   * the raw log, each line marked by its stream (the SDK demultiplexes), in binary frames of at most
   * 1,024 bytes (its read size); followed, each line as it comes. It ends with a normal close once
   * all is sent and, followed, once the command has an exit code: the daemon looks for it after a
   * second of reads finding nothing new, so the close comes up to a second after the exit. A command
   * that never exits is followed until the client goes. Undefined when the path is not this one.
   */
  followLogs(sandbox: StandInSandbox, rest: string, url: URL) {
    const match = /^\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/.exec(rest)
    if (match === null) return undefined
    if (sandbox.state !== "started") throw new ApiError(409, `Sandbox ${sandbox.id} is not started`)
    const { id, session } = this.command(sandbox, match[1]!, match[2]!)
    const follow = url.searchParams.get("follow") === "true"
    return (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.sockets.handleUpgrade(request, socket, head, (ws) => {
        const send = (text: string) => {
          const bytes = Buffer.from(text, "utf8")
          for (let at = 0; at < bytes.length; at += DAEMON_READ_BYTES) {
            ws.send(bytes.subarray(at, at + DAEMON_READ_BYTES), { binary: true })
          }
        }
        if (!follow) {
          send(session.shell.log(id).output)
          return ws.close(1000)
        }
        let last: NodeJS.Timeout | undefined
        const unfollow = session.shell.follow(id, {
          data: send,
          end: () => (last = setTimeout(() => ws.close(1000), EXIT_NOTICED_AFTER_MS))
        })
        ws.on("close", () => {
          unfollow()
          clearTimeout(last)
        })
      })
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
      const id = session.shell.execute(command)
      session.commands.set(id, command)
      if (runAsync === true || async === true) return { status: 202, body: { cmdId: id } }
      const exitCode = await session.shell.wait(id)
      if (exitCode === undefined) throw new ApiError(400, "session cancelled")
      return { status: 200, body: { cmdId: id, exitCode, ...session.shell.log(id) } }
    }
    const command = /^\/process\/session\/([^/]+)\/command\/([^/]+)(\/logs)?$/.exec(rest)
    if (method === "GET" && command !== null) {
      const { session, id, found } = this.command(sandbox, command[1]!, command[2]!)
      return command[3] === undefined
        ? { status: 200, body: { id, command: found, exitCode: session.shell.exitCode(id) } }
        : { status: 200, body: session.shell.log(id) }
    }
    if (method === "POST" && rest === "/files/bulk-upload") {
      await this.upload(sandbox, request)
      return { status: 200, body: "" }
    }
    return undefined
  }

  /** How many logs are being followed (open WebSockets). */
  following() {
    return this.sockets.clients.size
  }

  /** Close every follower's socket (the stand-in closes). */
  close() {
    for (const ws of this.sockets.clients) ws.terminate()
    this.sockets.close()
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
