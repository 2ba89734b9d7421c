/**
 * The session's background processes (`Runtime.spawn`), beside its shell. Each is
 * `bash -c <command>` in its own session (so a signal reaches the whole job), with the
 * sandbox's environment (`sandboxEnv`, never the server's key), the variables added at
 * run time and its own; it joins a cgroup of the session where one can be made (so the
 * session's pids limit covers it and release kills whatever it forked) and carries the
 * session marker (so the process-table fallback and the owner's reaper find it).
 * Output goes through the session's secret mask before anyone can read it, and is kept
 * up to a cap for late readers. At most `Limits.processes` are held at once; every one
 * is killed when the manager's scope closes (the session ends).
 */
import { Deferred, Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { constants } from "node:os"
import { invalidEnvMessage } from "../../schema/errors.ts"
import {
  ProcessError,
  type ProcessExit,
  processNotFound,
  type ProcessOutput,
  type ProcessSpec,
  type ProcessStarted
} from "../../schema/process.ts"
import { shortSecretsError } from "../../schema/secrets.ts"
import type { ProcessControl } from "../../services/Processes.ts"
import { type EnvStore, invalidEnvNames } from "../env.ts"
import { Limits } from "../limits.ts"
import { makeShellCgroup, type ShellCgroup } from "../shell/cgroup.ts"
import { killSession, SESSION_MARKER_VARIABLE } from "../shell/processTree.ts"
import { joiningCgroup } from "../shell/ShellProcess.ts"
import type { Workspace } from "../workspace.ts"
import { OutputLog } from "./outputLog.ts"

export interface ProcessManagerOptions {
  readonly workspace: Workspace
  /** The directory a process starts in without `cwd`, and the base of a relative one's. */
  readonly cwd: () => string
  /** The sandbox's environment (`sandboxEnv()`). */
  readonly baseEnv: Readonly<Record<string, string>>
  /** Run-time variables and the session's secret mask. */
  readonly env: EnvStore
  /** The session marker; each process is `<marker>/process-<id>`. */
  readonly marker: string
  readonly pidsLimit: number
}

interface Running {
  readonly child: ChildProcess
  readonly log: OutputLog
  readonly exit: Deferred.Deferred<ProcessExit>
  readonly marker: string
  readonly cgroup: ShellCgroup | null
}

const signalNames: ReadonlySet<string> = new Set(Object.keys(constants.signals))

/** Kill the process's session, descendants and marked processes, then its cgroup (everything it forked). */
const killTree = (running: Running) => {
  if (running.child.pid !== undefined) killSession(running.child.pid, running.marker)
  running.cgroup?.destroy()
}

/** The spec's variables checked as `addEnvVars` checks them; their secrets join the session's mask. */
const checkEnv = (spec: ProcessSpec): ProcessError | undefined => {
  const vars = spec.env ?? {}
  const invalid = invalidEnvNames(vars)
  if (invalid.length > 0) return new ProcessError({ message: invalidEnvMessage(invalid) })
  const short = shortSecretsError(vars, spec.secrets ?? [])
  return short === undefined ? undefined : new ProcessError({ message: short.message })
}

/** Start the child and resolve once it runs (or fail with why it could not, e.g. a missing cwd). */
const launch = (argv: [string, Array<string>], cwd: string, env: Record<string, string>) =>
  Effect.callback<ChildProcess, ProcessError>((resume) => {
    const child = spawn(argv[0], argv[1], { cwd, env, detached: true, stdio: "pipe" })
    child.once("spawn", () => resume(Effect.succeed(child)))
    child.once(
      "error",
      (error) =>
        resume(Effect.fail(new ProcessError({ message: `Cannot start the process in ${cwd}: ${error.message}` })))
    )
    // Interrupted before it ran: it has started nothing yet, so killing it is enough.
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

export const makeProcessManager = Effect.fn("ProcessManager.make")(function*(options: ProcessManagerOptions) {
  const limits = yield* Limits
  const held = new Map<string, Running>()
  let counter = 0
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      for (const running of held.values()) killTree(running)
      held.clear()
    })
  )

  /** Looked up when run, not when built: a handle's `wait` is one effect run again and again. */
  const find = (id: string) =>
    Effect.suspend(() => {
      const running = held.get(id)
      return running === undefined ? Effect.fail(processNotFound(id)) : Effect.succeed(running)
    })

  /**
   * Starts under way count against the limit with the processes held: a start waits (the cwd check,
   * the spawn) before its process is held, and concurrent starts must not all pass the check meanwhile.
   */
  let starting = 0
  const start = Effect.fn("ProcessManager.start")(function*(spec: ProcessSpec) {
    if (held.size + starting >= limits.processes) {
      return yield* new ProcessError({
        message:
          `The session holds its limit of background processes (EFFECT_SANDBOX_MAX_PROCESSES=${limits.processes}): ` +
          "close a process's scope (or DELETE it) before starting another."
      })
    }
    starting++
    return yield* startHeld(spec).pipe(Effect.ensuring(Effect.sync(() => void starting--)))
  })

  const startHeld = Effect.fn("ProcessManager.startHeld")(function*(spec: ProcessSpec) {
    const bad = checkEnv(spec)
    if (bad !== undefined) return yield* bad
    const cwd = yield* options.workspace.resolve(spec.cwd ?? options.workspace.root, options.cwd()).pipe(
      Effect.mapError((e) => new ProcessError({ message: e.message }))
    )
    for (const name of spec.secrets ?? []) options.env.mask.add(spec.env?.[name] ?? "")
    const id = String(++counter)
    const marker = `${options.marker}/process-${id}`
    const cgroup = makeShellCgroup(marker, options.pidsLimit)
    const env = { ...options.baseEnv, ...options.env.values, ...spec.env, [SESSION_MARKER_VARIABLE]: marker }
    const child = yield* launch(joiningCgroup(cgroup, ["/bin/bash", "-c", spec.command]), cwd, env).pipe(
      Effect.tapError(() => Effect.sync(() => cgroup?.destroy()))
    )
    const log = new OutputLog(limits.processOutputBytes)
    const exit = Deferred.makeUnsafe<ProcessExit>()
    // Each stream masked on its own, so a secret split between two reads of one pipe is still caught.
    const reader = (stream: ProcessOutput["stream"]) => options.env.mask.stream((text) => log.append({ stream, text }))
    const stdout = reader("stdout")
    const stderr = reader("stderr")
    child.stdout!.setEncoding("utf8").on("data", stdout)
    child.stderr!.setEncoding("utf8").on("data", stderr)
    // A write after the process exited (EPIPE) is not this server's problem.
    child.stdin!.on("error", () => undefined)
    child.once("close", (exitCode, signal) => {
      stdout.flush()
      stderr.flush()
      log.end()
      Deferred.doneUnsafe(exit, Effect.succeed({ exitCode, signal }))
    })
    held.set(id, { child, log, exit, marker, cgroup })
    return { id, pid: child.pid! } satisfies ProcessStarted
  })

  const write = Effect.fn("ProcessManager.write")(function*(id: string, text: string) {
    const { child } = yield* find(id)
    if (!child.stdin!.writable) {
      return yield* new ProcessError({ message: `The stdin of background process ${id} is closed.` })
    }
    child.stdin!.write(text)
  })

  const signal = Effect.fn("ProcessManager.signal")(function*(id: string, name: string) {
    const { child } = yield* find(id)
    if (!signalNames.has(name)) {
      return yield* new ProcessError({ message: `Unknown signal ${JSON.stringify(name)}: use a name such as SIGTERM.` })
    }
    if (child.exitCode !== null || child.signalCode !== null) return
    try {
      process.kill(-child.pid!, name)
    } catch {
      // the group is gone: the process exited meanwhile
    }
  })

  return {
    start,
    output: (id) => Effect.map(find(id), (running) => running.log.stream),
    write,
    closeStdin: (id) => Effect.map(find(id), ({ child }) => void child.stdin!.end()),
    signal,
    wait: (id) => Effect.flatMap(find(id), (running) => Deferred.await(running.exit)),
    remove: (id) =>
      Effect.map(find(id), (running) => {
        held.delete(id)
        killTree(running)
      })
  } satisfies ProcessControl
})
