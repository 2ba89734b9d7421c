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
import type { Writable } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import { shellQuote } from "../../../src/quoting/shellQuote.ts"
import type { StandInSandbox } from "./sandboxes.ts"

/** Where the session's commands keep their script, log and exit code (the daemon's, under its config dir). */
const SESSIONS_DIR = "/tmp/.daytona-standin/sessions"

const STDOUT_MARK = "\x01\x01\x01"
const STDERR_MARK = "\x02\x02\x02"
const EXIT_LINE = /^standin-exit (\S+) (-?\d+)$/
const LOG_LINE = /^standin-log (\S+) (.*)$/s

/** A command's output as the daemon's log endpoint gives it: the raw log, and each stream on its own. */
export interface CommandLogs {
  readonly output: string
  readonly stdout: string
  readonly stderr: string
}

/**
 * The wrapper the shell runs for one command (the daemon's, in substance): the command saved to
 * `cmd.sh` and sourced, each line of its output marked by its stream and appended to its log. Each
 * marked line is also printed on the shell's own stdout (`standin-log <id> ...`), where the
 * stand-in reads it as it comes: the log a follower is sent, without a process per read.
 */
const wrapper = (dir: string, id: string, command: string) =>
  [
    "{",
    `d='${dir}'`,
    `mkdir -p "$d" && printf '%s' ${shellQuote(command)} > "$d/cmd.sh" && : > "$d/log"`,
    `mkfifo "$d/o" "$d/e"`,
    ...(["o", "e"] as const).map((stream) => {
      const mark = stream === "o" ? "\\001\\001\\001" : "\\002\\002\\002"
      return `( while IFS= read -r l || [ -n "$l" ]; do printf '${mark}%s\\n' "$l" >> "$d/log"; ` +
        `printf 'standin-log ${id} ${mark}%s\\n' "$l"; done < "$d/${stream}" ) & ${stream}=$!`
    }),
    `{ . "$d/cmd.sh"; } < /dev/null > "$d/o" 2> "$d/e"`,
    "c=$?",
    `wait "$o" "$e"`,
    `rm -f "$d/o" "$d/e"`,
    `echo "$c" > "$d/exit_code"`,
    `echo "standin-exit ${id} $c"`,
    "}",
    ""
  ].join("\n")

/** One command's log as the shell printed it so far, and who follows it. */
interface Log {
  text: string
  readonly followers: Set<Follower>
}

/** A follower of a command's log: each piece as it comes, then the command's end (or the shell's). */
export interface Follower {
  readonly data: (chunk: string) => void
  readonly end: () => void
}

export class SessionShell {
  private readonly exits = new Map<string, number>()
  private readonly waiters = new Map<string, Array<(code: number | undefined) => void>>()
  private readonly logs = new Map<string, Log>()
  private closed = false

  private readonly dir: string
  private readonly stdin: Writable

  private constructor(dir: string, stdin: Writable) {
    this.dir = dir
    this.stdin = stdin
  }

  /** The session's shell, started as the sandbox user. */
  static async open(sandbox: StandInSandbox, sessionId: string): Promise<SessionShell> {
    const spawned = sandbox.spawner.start({
      argv: ["sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi"],
      user: sandbox.user,
      stdin: true
    })
    await spawned.pid
    const shell = new SessionShell(`${SESSIONS_DIR}/${sessionId}`, spawned.stdin!)
    const out = spawned.stdout
    const decoder = new StringDecoder("utf8")
    let pending = ""
    out.on("data", (chunk: Buffer) => {
      pending += decoder.write(chunk)
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        const logged = LOG_LINE.exec(line)
        if (logged !== null) shell.logged(logged[1]!, `${logged[2]!}\n`)
        const exit = EXIT_LINE.exec(line)
        if (exit !== null) shell.ended(exit[1]!, Number(exit[2]))
      }
    })
    spawned.stderr.resume()
    // The shell gone (replaced by an `exec` that ended, or the sandbox stopped): no exit comes any more.
    void spawned.ended.then(() => shell.close())
    return shell
  }

  private logged(id: string, line: string) {
    const log = this.logs.get(id)
    if (log === undefined) return
    log.text += line
    for (const follower of log.followers) follower.data(line)
  }

  private ended(id: string, code: number | undefined) {
    if (code !== undefined) this.exits.set(id, code)
    for (const wake of this.waiters.get(id) ?? []) wake(code)
    this.waiters.delete(id)
    for (const follower of this.logs.get(id)?.followers ?? []) follower.end()
  }

  private close() {
    if (this.closed) return
    this.closed = true
    for (const id of this.waiters.keys()) this.ended(id, undefined)
    for (const log of this.logs.values()) for (const follower of log.followers) follower.end()
  }

  /**
   * Write `command` into the shell, wrapped; its id at once, as the daemon answers (it writes the
   * command's files itself and returns; here the wrapper writes them, so no process is waited for).
   */
  execute(command: string): string {
    const id = randomUUID()
    this.logs.set(id, { text: "", followers: new Set() })
    if (!this.closed) this.stdin.write(wrapper(`${this.dir}/${id}`, id, command))
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
  log(id: string): CommandLogs {
    const output = this.logs.get(id)?.text ?? ""
    const lines = output.split("\n")
    const of = (mark: string) =>
      lines.filter((line) => line.startsWith(mark)).map((line) => `${line.slice(mark.length)}\n`).join("")
    return { output, stdout: of(STDOUT_MARK), stderr: of(STDERR_MARK) }
  }

  /**
   * Follow the command's log: what it holds now, then each line as it comes, then `end` once the
   * command ended (or the shell is gone). Returns the unfollow.
   */
  follow(id: string, follower: Follower): () => void {
    const log = this.logs.get(id)!
    if (log.text !== "") follower.data(log.text)
    if (this.exits.has(id) || this.closed) {
      follower.end()
      return () => undefined
    }
    log.followers.add(follower)
    return () => log.followers.delete(follower)
  }

  /** End the shell (the session deleted, or its sandbox stopped). */
  end() {
    this.stdin.end()
    this.close()
  }
}
