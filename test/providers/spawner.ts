/**
 * How a stand-in starts a process in one of its sandboxes at the speed the provider's daemon inside
 * the sandbox does (E2B's envd forks it in the VM, in milliseconds), rather than through `docker
 * exec` (the engine's exec, runc and a shim: ~50-100 ms a process on a loaded two-core machine,
 * which made the stand-ins' starts slower than the services').
 *
 * The container's own process is a small `sh` loop (`ENTRYPOINT`) reading request numbers from a
 * FIFO in a host directory bind-mounted read-only at `/.standin` (FIFOs open for writing there;
 * nothing in the sandbox can make or replace a file the host then writes or reads). For each, it runs the request's script,
 * written by the host: as root, it opens the FIFOs the host made for the process's output and
 * status, starts the command as the user (`setpriv`, the user's groups and `HOME`, the request's
 * environment and directory), reports its pid, waits for it and reports its exit code. The process
 * is the container's, in its namespaces and cgroups, so a pause freezes it and a removal ends it;
 * then the status FIFO ends without an exit code, which reads as -1.
 */
import { spawnSync } from "node:child_process"
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough, type Readable, type Writable } from "node:stream"
import { shellQuote } from "../../src/quoting/shellQuote.ts"

/** Where the host directory is mounted in the container. */
const MOUNT = "/.standin"

/**
 * The container's process: each request in a subshell that exits at once, so the request's shell
 * is orphaned to the container's init (which reaps it) rather than left a zombie of this loop.
 */
const LOOP =
  `exec 3<>${MOUNT}/control; while read -r n <&3; do (/bin/sh ${MOUNT}/$n.sh </dev/null >/dev/null 2>&1 &); done`

/** Command lines of the stand-in's own processes in a container (to leave out of a listing of its processes). */
export const SPAWNER_PROCESS = /\/\.standin\//

export interface SpawnRequest {
  readonly argv: ReadonlyArray<string>
  /** A user name or uid in the container. */
  readonly user: string
  readonly env?: Readonly<Record<string, string>>
  /** The container's working directory when not given. */
  readonly cwd?: string | undefined
  /** Whether the process reads a stdin the caller writes (`Spawned.stdin`); else it reads nothing. */
  readonly stdin?: boolean
}

export interface Spawned {
  /** Its stdin, when asked for: ending it is the process's end of input. */
  readonly stdin: Writable | undefined
  readonly stdout: Readable
  readonly stderr: Readable
  /** The process's pid in the container, once started; rejects with why it could not start. */
  readonly pid: Promise<number>
  /** Its exit code (128 + the signal for a killed one); -1 when the container went away first. */
  readonly exit: Promise<number>
  /**
   * Its exit code once its stdout and stderr have ended too (a background child of the process may
   * hold them longer): its end as envd and the daemons report it.
   */
  readonly ended: Promise<number>
}

/** A promise with its settling functions. */
const deferred = <A>() => {
  let resolve!: (value: A) => void
  let reject!: (error: Error) => void
  const promise = new Promise<A>((ok, fail) => {
    resolve = ok
    reject = fail
  })
  return { promise, resolve, reject }
}

/** A FIFO's read end without blocking the event loop; a write end of our own keeps it from reading as ended before the process opens it. */
const readEnd = (path: string) => {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const held = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
  return { socket: new Socket({ fd, readable: true, writable: false }), release: () => closeSync(held) }
}

export class Spawner {
  /** The host directory, bind-mounted in the container. */
  readonly dir: string
  private readonly control: number
  private next = 0
  /** Our write ends of the FIFOs of requests not started yet: a removed container never opens them. */
  private readonly unopened = new Set<() => void>()
  private closed = false

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "standin-spawner-"))
    spawnSync("mkfifo", ["-m", "600", join(this.dir, "control")])
    // Read and write: never blocks, and the loop's reads wait for lines rather than end.
    this.control = openSync(join(this.dir, "control"), constants.O_RDWR | constants.O_NONBLOCK)
  }

  /** The container's `Entrypoint` and the bind its `HostConfig.Binds` needs. */
  get entrypoint(): Array<string> {
    return ["/bin/sh", "-c", LOOP]
  }
  get bind(): string {
    return `${this.dir}:${MOUNT}:ro`
  }

  /** Start a process; its output is read as it is written. */
  start(request: SpawnRequest): Spawned {
    // Names become `export` lines of a script run as root: only a shell name may be one.
    const badName = Object.keys(request.env ?? {}).find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    if (badName !== undefined) throw new Error(`not an environment variable name: ${JSON.stringify(badName)}`)
    const n = this.next++
    const names = request.stdin === true ? ["out", "err", "status", "in"] : ["out", "err", "status"]
    const fifos = names.map((name) => join(this.dir, `${n}.${name}`))
    spawnSync("mkfifo", ["-m", "600", ...fifos])
    const [out, err, status] = fifos.slice(0, 3).map(readEnd) as [
      ReturnType<typeof readEnd>,
      ReturnType<typeof readEnd>,
      ReturnType<typeof readEnd>
    ]
    const inside = (name: string) => `${MOUNT}/${n}.${name}`
    // Read and write: its open never waits, and the process's reads of it wait for our writes.
    const input = fifos[3] === undefined
      ? undefined
      : new Socket({ fd: openSync(fifos[3], constants.O_RDWR | constants.O_NONBLOCK), readable: false, writable: true })
    // A process that ended reads no more: what is written after is dropped.
    input?.on("error", () => undefined)
    // Written into the FIFO once the process has it open: our end closed before that would leave its open waiting.
    const stdin = input === undefined ? undefined : new PassThrough()
    const user = shellQuote(request.user)
    const command = request.argv.map(shellQuote).join(" ")
    const cwd = request.cwd === undefined || request.cwd === "" ? undefined : request.cwd
    writeFileSync(
      join(this.dir, `${n}.sh`),
      [
        `exec 4>${inside("status")} 5>${inside("out")} 6>${inside("err")} 7<${
          input === undefined ? "/dev/null" : inside("in")
        }`,
        // As `docker exec -u`: a uid that no entry names runs with gid 0, no other groups and HOME /.
        `groups=--init-groups`,
        `gid=$(id -g ${user} 2>&1) || case ${user} in *[!0-9]*) echo "error $gid" >&4; exit ;; *) gid=0 groups=--clear-groups ;; esac`,
        `home=$(getent passwd ${user} | cut -d: -f6)`,
        `export HOME="\${home:-/}"`,
        ...Object.entries(request.env ?? {}).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
        ...(cwd === undefined
          ? []
          : [`cd ${shellQuote(cwd)} 2>/dev/null || { echo error no such directory: ${shellQuote(cwd)} >&4; exit; }`]),
        `setpriv --reuid=${user} --regid="$gid" "$groups" -- ${command} <&7 >&5 2>&6 4>&- 7<&- &`,
        `exec 5>&- 6>&- 7<&-`,
        `echo "pid $!" >&4`,
        `wait $!`,
        `echo "exit $?" >&4`
      ].join("\n") + "\n"
    )
    const releaseAll = () => {
      if (!this.unopened.delete(releaseAll)) return
      for (const fifo of [out, err, status]) fifo.release()
    }
    this.unopened.add(releaseAll)
    let lines = ""
    let pid: number | undefined
    let exitCode = -1
    const started = deferred<number>()
    const exit = deferred<number>()
    status.socket.on("data", (chunk: Buffer) => {
      lines += chunk.toString("utf8")
      for (let end = lines.indexOf("\n"); end >= 0; end = lines.indexOf("\n")) {
        const [word, ...rest] = lines.slice(0, end).split(" ")
        lines = lines.slice(end + 1)
        if (word === "pid") {
          pid = Number(rest[0])
          // The request's shell holds every FIFO now (its process the output's): ours can go.
          releaseAll()
          if (input !== undefined) stdin?.pipe(input)
          started.resolve(pid)
        } else if (word === "exit") exitCode = Number(rest[0])
        else if (word === "error") {
          releaseAll()
          input?.destroy()
          started.reject(new Error(rest.join(" ")))
        }
      }
    })
    status.socket.on("close", () => {
      input?.destroy()
      started.reject(new Error("the sandbox went away before the process started"))
      exit.resolve(pid === undefined ? -1 : exitCode)
      for (const path of [...fifos, join(this.dir, `${n}.sh`)]) rmSync(path, { force: true })
    })
    started.promise.catch(() => undefined)
    const outputEnded = Promise.all(
      [out, err].map(({ socket }) => new Promise((resolve) => socket.once("close", resolve)))
    )
    writeSync(this.control, `${n}\n`)
    return {
      stdin,
      stdout: out.socket,
      stderr: err.socket,
      pid: started.promise,
      exit: exit.promise,
      ended: Promise.all([exit.promise, outputEnded]).then(([code]) => code)
    }
  }

  /** Run a command to its end: its exit code and output (stdout and stderr together). */
  async run(
    argv: ReadonlyArray<string>,
    user: string
  ): Promise<{ readonly exitCode: number; readonly output: string }> {
    const spawned = this.start({ argv, user })
    const chunks: Array<Buffer> = []
    spawned.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    spawned.stderr.on("data", (chunk: Buffer) => chunks.push(chunk))
    const exitCode = await spawned.pid.then(() => spawned.ended, async (error: Error) => {
      await spawned.ended
      chunks.push(Buffer.from(error.message))
      return -1
    })
    return { exitCode, output: Buffer.concat(chunks).toString("utf8") }
  }

  /** Once its container is removed: what it never started ends (-1), the control FIFO is closed, the directory gone. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const release of this.unopened) release()
    closeSync(this.control)
    rmSync(this.dir, { recursive: true, force: true })
  }
}
