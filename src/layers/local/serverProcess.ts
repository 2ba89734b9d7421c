/**
 * An action server as a child process of this one: a scoped resource.
 *
 * It runs in its own process group with `--exit-on-stdin-close` (if we die, its
 * stdin closes and it shuts down cleanly). Releasing sends SIGTERM to the group,
 * SIGKILL after a grace period, then kills anything its shells left behind
 * (shells are session leaders, outside the group, but carry the runtime's marker).
 * The port comes from the server's own announcement (it binds port 0): never
 * probe-then-bind.
 */
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { userInfo } from "node:os"
import { dirname, join } from "node:path"
import type { Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import { sandboxEnv, SESSION_KEY_FD_VARIABLE } from "../../executor/childEnv.ts"
import { killRuntimeProcesses, signalProcessGroup } from "../../executor/shell/processTree.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { LISTENING_PREFIX } from "../../server/announce.ts"
import { serverCommand, serverEnv } from "../../server/commandLine.ts"
import { COMPILE_CACHE_VARIABLE } from "../../server/compileCache.ts"
import { payloadDirectory } from "../../serverStart/payload.ts"
import type { RuntimeTools } from "../../services/RuntimeOptions.ts"
import { localCompileCacheDir } from "./compileCache.ts"
/** How to start one server. */
export interface ServerProcessOptions {
  readonly workspace: string
  /** The server's private state directory (ours to remove, so a killed server leaves nothing). */
  readonly stateDir: string
  /**
   * Directories the server removes when it stops (`--temporary-dir`): if we are
   * killed with SIGKILL, our finalizers never run, but the server still stops
   * (its stdin closes) and takes them with it.
   */
  readonly temporaryDirs?: ReadonlyArray<string>
  readonly sessionId: string
  readonly sessionApiKey: Redacted.Redacted<string>
  readonly noChangeTimeoutSeconds: number
  /** `--restrict-to-workspace`: file actions refused outside the workspace (default false, the server's own). */
  readonly restrictToWorkspace?: boolean
  /** The tools it runs (server/commandLine.ts; default: none). MCP servers are sent once it answers. */
  readonly tools?: RuntimeTools
  /** Extra environment for the server (and so its shells), before the tools' (`serverEnv`). */
  readonly env?: Readonly<Record<string, string>>
  /** The server script to run with this Node (default: `defaultServerEntry`). */
  readonly serverEntry?: string
}

export interface ServerProcess {
  readonly pid: number
  readonly baseUrl: string
}

/** How long SIGTERM may take before SIGKILL (OpenHands: 5 s; our server stops in milliseconds). */
const STOP_GRACE_MS = 3_000
/** How long a server may take to announce its port. */
const START_TIMEOUT_MS = 30_000

/**
 * Which server to run: the bundled payload (`payload/server.mjs`), which starts in ~140 ms against
 * ~600 ms (and as much CPU) for the unbundled tree. From source it is the checkout's payload, built
 * first when src/ changed since its last build (serverStart/payload.ts), so tests run the current
 * code, and run it as a user's server does. From the built package: the payload it ships, else
 * `dist/src/server/main.js`.
 */
export const defaultServerEntry: Effect.Effect<string, RuntimeStartError> = Effect.suspend(() => {
  const here = fileURLToPath(import.meta.url)
  const payload = Effect.map(payloadDirectory, (directory) => join(directory, "server.mjs"))
  return here.endsWith(".ts")
    ? payload
    : Effect.orElseSucceed(payload, () => join(dirname(here), "..", "..", "server", "main.js"))
})

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

const waitForExit = (child: ChildProcess, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (exited(child)) return resolve(true)
    const timer = setTimeout(() => resolve(false), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

const stop = (child: ChildProcess, sessionId: string) =>
  Effect.promise(async () => {
    if (!exited(child)) {
      signalProcessGroup(child.pid!, "SIGTERM")
      if (!(await waitForExit(child, STOP_GRACE_MS))) {
        signalProcessGroup(child.pid!, "SIGKILL")
        await waitForExit(child, STOP_GRACE_MS)
      }
    }
    killRuntimeProcesses(sessionId)
  })

const launch = (options: ServerProcessOptions, entry: string) =>
  Effect.callback<{ readonly child: ChildProcess; readonly port: number }, RuntimeStartError>((resume) => {
    const user = userInfo()
    const [node, ...args] = serverCommand({
      node: process.execPath,
      entry,
      port: 0,
      workingDir: options.workspace,
      host: "127.0.0.1",
      username: user.username,
      userId: user.uid,
      tools: options.tools ?? {},
      restrictToWorkspace: options.restrictToWorkspace === true,
      exitOnStdinClose: true,
      temporaryDirs: options.temporaryDirs ?? []
    })
    const child = spawn(node!, args, {
      detached: true,
      // fd 3: the session key, through a pipe rather than the environment, which any
      // same-user process could read in /proc/<pid>/environ (server/sessionKey.ts).
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      env: {
        ...sandboxEnv(),
        ...serverEnv({
          env: options.env,
          tools: options.tools ?? {},
          sessionId: options.sessionId,
          noChangeTimeoutSeconds: options.noChangeTimeoutSeconds,
          extra: {
            [SESSION_KEY_FD_VARIABLE]: "3",
            EFFECT_SANDBOX_STATE_DIR: options.stateDir,
            [COMPILE_CACHE_VARIABLE]: localCompileCacheDir()
          }
        })
      }
    }) // A server that dies before reading it is reported by the exit handler below, not as EPIPE.
    ;(child.stdio[3] as Writable).on("error", () => undefined).end(Redacted.value(options.sessionApiKey))
    let stdout: string | null = ""
    let stderr = ""
    const fail = (message: string) => resume(Effect.fail(new RuntimeStartError({ message })))
    const timer = setTimeout(() => {
      signalProcessGroup(child.pid!, "SIGKILL")
      fail(`The action server did not announce its port within ${START_TIMEOUT_MS / 1000} s. stderr: ${stderr.trim()}`)
    }, START_TIMEOUT_MS)
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4096)))
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      if (stdout === null) return
      stdout += d
      const line = stdout.split("\n").find((l) => l.startsWith(LISTENING_PREFIX))
      if (line === undefined) return
      clearTimeout(timer)
      const port = Number(JSON.parse(line.slice(LISTENING_PREFIX.length)).port)
      stdout = null
      resume(Effect.succeed({ child, port }))
    })
    child.on("error", (error) => {
      clearTimeout(timer)
      fail(`Cannot start the action server (${process.execPath}): ${error.message}`)
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      fail(`The action server exited (${signal ?? `code ${code}`}) before listening. stderr: ${stderr.trim()}`)
    })
    // Interrupted while starting: do not leave it running.
    return Effect.sync(() => {
      clearTimeout(timer)
      signalProcessGroup(child.pid!, "SIGKILL")
    })
  })

/** Start an action server on 127.0.0.1 (OS-assigned port); stopped when the scope closes. */
export const startServerProcess = (options: ServerProcessOptions) =>
  Effect.acquireRelease(
    Effect.flatMap(
      options.serverEntry === undefined ? defaultServerEntry : Effect.succeed(options.serverEntry),
      (entry) => launch(options, entry)
    ),
    ({ child }) => stop(child, options.sessionId)
  ).pipe(
    Effect.map(({ child, port }): ServerProcess => ({ pid: child.pid!, baseUrl: `http://127.0.0.1:${port}` }))
  )
