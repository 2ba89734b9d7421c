/**
 * A toolbox session as Daytona's daemon keeps it (apps/daemon/pkg/session): ONE shell per session
 * (bash where the image has it, else sh), started when the session is created, into whose stdin
 * each command is written wrapped: the command is saved to a file and sourced (`. cmd.sh`) in that
 * shell, its stdout and stderr written to one log with each line marked by its stream (the
 * daemon's 0x01 0x01 0x01 and 0x02 0x02 0x02), and only once it returned is its exit code written.
 * So commands of a session run one after another, a `cd` or `export` carries over, and a command
 * that `exec`s replaces the session's shell: nothing is left to write its exit code, which then
 * never comes. The stand-in learns of an exit from a line the wrapper prints on the shell's own
 * stdout, after the exit code file was written.
 */
import { randomUUID } from "node:crypto"
import { type Duplex, PassThrough } from "node:stream"
import { docker, type StandInSandbox } from "./sandboxes.ts"

/** Where the session's commands keep their script, log and exit code (the daemon's, under its config dir). */
const SESSIONS_DIR = "/tmp/.daytona-standin/sessions"

const STDOUT_MARK = "\x01\x01\x01"
const STDERR_MARK = "\x02\x02\x02"
const EXIT_LINE = /^standin-exit (\S+) (-?\d+)$/

/** A command's output as the daemon's log endpoint gives it: the raw log, and each stream on its own. */
export interface CommandLogs {
  readonly output: string
  readonly stdout: string
  readonly stderr: string
}

/** Run `command` (sh) once as the sandbox user, to completion: its stdout (for the stand-in's own bookkeeping). */
const runOnce = async (sandbox: StandInSandbox, command: string, env: Record<string, string>): Promise<string> => {
  const exec = await sandbox.container!.exec({
    Cmd: ["sh", "-c", command],
    User: sandbox.user,
    AttachStdout: true,
    AttachStderr: true,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`)
  })
  const stream = await exec.start({ hijack: true, stdin: false })
  const out = new PassThrough()
  const chunks: Array<Buffer> = []
  out.on("data", (chunk: Buffer) => chunks.push(chunk))
  docker.modem.demuxStream(stream, out, new PassThrough().resume())
  await new Promise<void>((resolve) => {
    stream.on("end", resolve)
    stream.on("error", () => resolve())
  })
  return Buffer.concat(chunks).toString("utf8")
}

/** The wrapper the shell runs for one command (the daemon's, in substance). */
const wrapper = (dir: string, id: string) =>
  [
    "{",
    `d='${dir}'`,
    `mkfifo "$d/o" "$d/e"`,
    `( while IFS= read -r l || [ -n "$l" ]; do printf '\\001\\001\\001%s\\n' "$l"; done < "$d/o" ) >> "$d/log" & o=$!`,
    `( while IFS= read -r l || [ -n "$l" ]; do printf '\\002\\002\\002%s\\n' "$l"; done < "$d/e" ) >> "$d/log" & e=$!`,
    `{ . "$d/cmd.sh"; } < /dev/null > "$d/o" 2> "$d/e"`,
    "c=$?",
    `wait "$o" "$e"`,
    `rm -f "$d/o" "$d/e"`,
    `echo "$c" > "$d/exit_code"`,
    `echo "standin-exit ${id} $c"`,
    "}",
    ""
  ].join("\n")

export class SessionShell {
  private readonly exits = new Map<string, number>()
  private readonly waiters = new Map<string, Array<(code: number | undefined) => void>>()
  private closed = false

  private readonly sandbox: StandInSandbox
  private readonly dir: string
  private readonly stdin: Duplex

  private constructor(sandbox: StandInSandbox, dir: string, stdin: Duplex) {
    this.sandbox = sandbox
    this.dir = dir
    this.stdin = stdin
  }

  /** The session's shell, started as the sandbox user. */
  static async open(sandbox: StandInSandbox, sessionId: string): Promise<SessionShell> {
    const exec = await sandbox.container!.exec({
      Cmd: ["sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi"],
      User: sandbox.user,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true
    })
    const stream = await exec.start({ hijack: true, stdin: true })
    const shell = new SessionShell(sandbox, `${SESSIONS_DIR}/${sessionId}`, stream)
    const out = new PassThrough()
    let pending = ""
    out.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8")
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        const exit = EXIT_LINE.exec(line)
        if (exit !== null) shell.ended(exit[1]!, Number(exit[2]))
      }
    })
    docker.modem.demuxStream(stream, out, new PassThrough().resume())
    // The shell gone (replaced by an `exec` that ended, or the sandbox stopped): no exit comes any more.
    const gone = () => shell.close()
    stream.on("end", gone)
    stream.on("error", gone)
    stream.on("close", gone)
    return shell
  }

  private ended(id: string, code: number | undefined) {
    if (code !== undefined) this.exits.set(id, code)
    for (const wake of this.waiters.get(id) ?? []) wake(code)
    this.waiters.delete(id)
  }

  private close() {
    this.closed = true
    for (const id of this.waiters.keys()) this.ended(id, undefined)
  }

  /** Write `command` into the shell, wrapped; its id. */
  async execute(command: string): Promise<string> {
    const id = randomUUID()
    const dir = `${this.dir}/${id}`
    await runOnce(this.sandbox, `mkdir -p "$D" && printf '%s' "$CMD" > "$D/cmd.sh" && : > "$D/log"`, {
      D: dir,
      CMD: command
    })
    if (!this.closed) this.stdin.write(wrapper(dir, id))
    return id
  }

  /** The exit code, once the wrapper wrote it. */
  exitCode(id: string): number | undefined {
    return this.exits.get(id)
  }

  /** Settles with the exit code once written, or undefined once the shell is gone without it. */
  wait(id: string): Promise<number | undefined> {
    if (this.exits.has(id)) return Promise.resolve(this.exits.get(id))
    if (this.closed) return Promise.resolve(undefined)
    return new Promise((resolve) => this.waiters.set(id, [...(this.waiters.get(id) ?? []), resolve]))
  }

  /** The command's log: raw (the daemon's `output`) and split by stream. */
  async logs(id: string): Promise<CommandLogs> {
    const output = await runOnce(this.sandbox, `cat "$D/log" 2>/dev/null`, { D: `${this.dir}/${id}` })
    const lines = output.split("\n")
    const of = (mark: string) =>
      lines.filter((line) => line.startsWith(mark)).map((line) => `${line.slice(mark.length)}\n`).join("")
    return { output, stdout: of(STDOUT_MARK), stderr: of(STDERR_MARK) }
  }

  /** End the shell (the session deleted, or its sandbox stopped). */
  end() {
    this.stdin.end()
    this.close()
  }
}
