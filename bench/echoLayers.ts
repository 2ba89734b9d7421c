/**
 * `node bench/echoLayers.ts [calls]`: the CPU one `echo hi` costs at each layer of CliRuntime's
 * path, this process's (`process.cpuUsage`) and bash's (`/proc/<pid>/schedstat`), which load
 * disturbs far less than wall time: bash on its PTY driven by `ShellProcess` alone, the
 * `BashSession` (one running command, its wait, its observation), the `ActionExecutor` (its lock
 * and masking), the whole `CliRuntime` (the action's span and metrics, the call gate), and a
 * persistent bash pipe beside them (the bench's floor). Each layer warms up before it is measured.
 */
import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeActionExecutor } from "../src/executor/ActionExecutor.ts"
import { EnvStore } from "../src/executor/env.ts"
import { makeBashSession } from "../src/executor/shell/BashSession.ts"
import { ShellProcess } from "../src/executor/shell/ShellProcess.ts"
import { CliRuntime, CmdRunAction, Runtime } from "../src/index.ts"
import { PipeShell } from "./baselines.ts"

const calls = Number(process.argv[2] ?? 3000)
const WARMUP = 500

/** CPU time `pid` has used, in µs. */
const cpuOf = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000

/** The bash processes this process started (each layer starts one). */
const ownBashes = () =>
  new Set(
    readdirSync("/proc").filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
      try {
        const [name, rest] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")
        return name!.endsWith("(bash") && Number(rest!.split(" ")[1]) === process.pid
      } catch {
        return false
      }
    })
  )

/** Starts what `start` starts, then names the bash it started. */
const withNewBash = async <A>(start: () => Promise<A>): Promise<[A, number]> => {
  const before = ownBashes()
  const made = await start()
  const pid = [...ownBashes()].find((p) => !before.has(p))
  if (pid === undefined) throw new Error("no new bash process")
  return [made, pid]
}

const measure = async (label: string, call: () => Promise<unknown>, bash: number) => {
  for (let i = 0; i < WARMUP; i++) await call()
  const bash0 = cpuOf(bash)
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  for (let i = 0; i < calls; i++) await call()
  const wall = (performance.now() - wall0) * 1000 / calls
  const cpu = process.cpuUsage(cpu0)
  const node = (cpu.user + cpu.system) / calls
  const shell = (cpuOf(bash) - bash0) / calls
  console.log(
    `${label.padEnd(15)} wall ${wall.toFixed(0).padStart(5)} µs   node CPU ${node.toFixed(0).padStart(4)} µs   ` +
      `bash CPU ${shell.toFixed(0).padStart(4)} µs`
  )
}

const dir = mkdtempSync(join(tmpdir(), "echo-layers-"))
const scope = Scope.makeUnsafe()
const action = new CmdRunAction({ command: "echo hi", blocking: true, timeout: 120 })

let prompted: (() => void) | null = null
const [shell, shellPid] = await withNewBash(async () => {
  const proc = new ShellProcess({
    cwd: dir,
    stateDir: dir,
    shellPath: "/bin/bash",
    env: process.env as Record<string, string>,
    marker: `echo-layers-${process.pid}`,
    loadUserRc: false,
    pidsLimit: 1024
  }, {
    onOutput: () => undefined,
    onPrompt: () => prompted?.(),
    onExit: () => undefined
  })
  await new Promise<void>((resolve) => (prompted = resolve))
  return proc
})
const viaShell = () =>
  new Promise<void>((resolve) => {
    prompted = resolve
    shell.write(`__es_run $'echo hi\\n' x; eval "$__es_cmd"\n`)
  })

const [session, sessionPid] = await withNewBash(() =>
  Effect.runPromise(Scope.provide(
    makeBashSession({
      cwd: dir,
      stateDir: join(dir, "session"),
      env: new EnvStore(join(dir, "env.sh")),
      noChangeTimeoutSeconds: 10,
      marker: `echo-layers-${process.pid}`
    }),
    scope
  ))
)
const [executor, executorPid] = await withNewBash(() =>
  Effect.runPromise(Scope.provide(
    makeActionExecutor({
      workspace: dir,
      restrictToWorkspace: false,
      noChangeTimeoutSeconds: 10,
      sessionMarker: `echo-layers-${process.pid}`
    }),
    scope
  ))
)
const runtime = ManagedRuntime.make(CliRuntime.layer())
const [rt, cliPid] = await withNewBash(() => runtime.runPromise(Runtime))
const [pipe, pipePid] = await withNewBash(async () => new PipeShell())

try {
  await measure("ShellProcess", viaShell, shellPid)
  await measure("BashSession", () => Effect.runPromise(session.execute(action)), sessionPid)
  await measure("ActionExecutor", () => Effect.runPromise(executor.execute(action)), executorPid)
  await measure("CliRuntime", () => runtime.runPromise(rt.runCommand(new CmdRunAction({ command: "echo hi" }))), cliPid)
  await measure("bash pipe", () => pipe.run("echo hi"), pipePid)
  console.log(`load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)
} finally {
  shell.kill()
  pipe.close()
  await runtime.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
}
