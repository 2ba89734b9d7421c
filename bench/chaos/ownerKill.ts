/**
 * Group 4, owner SIGKILL: an owner process starts a runtime and is killed with
 * SIGKILL (no finalizer runs). Everything it started must go away on its own, with
 * no other runtime starting: for Local the server and its processes, the temp
 * workspace and the state dir; for Docker the container and its temp workspace,
 * within 60 s. Whatever is still there at the end is removed by the group itself.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { broken, type GroupContext, type Row, waitFor } from "./rows.ts"
import { processesWithEnv } from "./server.ts"

/** The reap time the issue asks for. */
const REAP_TARGET_S = 60

/** What owner.ts prints before the JSON of its runtime. */
const OWNER_PREFIX = "chaos-owner "

/** Start `owner.ts` and read its first line (the runtime it started). */
const startOwner = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly pid: number; readonly id: string; readonly workspace: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "owner.ts"), ...args], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`owner ${args[0]} did not start within 180 s`))
    }, 180_000)
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      // Its logs may come first: the runtime is the line with the prefix.
      const line = out.split("\n").find((l) => l.startsWith(OWNER_PREFIX))
      if (line === undefined) return
      clearTimeout(timer)
      try {
        resolve({ pid: child.pid!, ...JSON.parse(line.slice(OWNER_PREFIX.length)) })
      } catch (error) {
        child.kill("SIGKILL")
        reject(error)
      }
    })
    child.on("exit", (code) => reject(new Error(`owner ${args[0]} exited (${code}) before starting: ${out}`)))
  })

const envOf = (pid: number, name: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").find((e) => e.startsWith(`${name}=`))?.slice(
      name.length + 1
    )
  } catch {
    return undefined
  }
}

/** A row for a reap: the seconds it took, or the seconds waited when something was still there. */
const reapRow = (name: string, waitedMs: number | null, boundMs: number, left: ReadonlyArray<string>): Row => {
  if (left.length > 0) console.log(`  ${name}: still there after ${(boundMs / 1000).toFixed(0)} s: ${left.join(", ")}`)
  return {
    name,
    value: Math.round((waitedMs ?? boundMs) / 100) / 10,
    unit: "s",
    target: `<= ${REAP_TARGET_S}`,
    pass: waitedMs !== null && waitedMs <= REAP_TARGET_S * 1000
  }
}

const localKill = async (boundMs: number): Promise<Row> => {
  const owner = await startOwner(["local"])
  const marker = (pid: number) => envOf(pid, "RUNTIME_ID") === owner.id
  const processes = () => [
    ...processesWithEnv(`RUNTIME_ID=${owner.id}`),
    ...processesWithEnv(`EFFECT_SANDBOX_SESSION=${owner.id}/`)
  ]
  const server = processes().find(marker)
  const stateDir = server === undefined ? undefined : envOf(server, "EFFECT_SANDBOX_STATE_DIR")
  process.kill(owner.pid, "SIGKILL")
  const left = () => [
    ...processes().map((pid) => `process ${pid}`),
    ...(existsSync(owner.workspace) ? [`workspace ${owner.workspace}`] : []),
    ...(stateDir !== undefined && existsSync(stateDir) ? [`state dir ${stateDir}`] : [])
  ]
  const waited = await waitFor(() => left().length === 0, boundMs, 250)
  const remaining = left()
  for (const pid of processes()) process.kill(pid, "SIGKILL")
  rmSync(owner.workspace, { recursive: true, force: true })
  if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true })
  return reapRow("owner-kill: Local owner SIGKILLed, everything gone after", waited, boundMs, remaining)
}

const docker = (...args: Array<string>) => spawnSync("docker", args, { encoding: "utf8" }).stdout.trim()

/** The Debian base image tag (built and cached by scripts/base-image.sh, as the Docker tests find it). */
export const baseImage = (): string => {
  const script = join(import.meta.dirname, "..", "..", "scripts", "base-image.sh")
  const result = spawnSync(script, ["base"], { encoding: "utf8" })
  if (result.status !== 0) throw new Error(`Cannot build the base image: ${result.stderr}`)
  return result.stdout.trim().split("\n").at(-1)!
}

const dockerKill = async (boundMs: number): Promise<Row> => {
  const owner = await startOwner(["docker", baseImage()])
  const label = `label=effect-sandbox.session=${owner.id}`
  const container = docker("ps", "-aq", "--filter", label)
  const hostWorkspace = docker(
    "inspect",
    "-f",
    "{{index .Config.Labels \"effect-sandbox.temporary-workspace\"}}",
    container
  )
  process.kill(owner.pid, "SIGKILL")
  const left = () => [
    ...docker("ps", "-aq", "--filter", label).split("\n").filter((c) => c !== "").map((c) => `container ${c}`),
    ...(hostWorkspace !== "" && existsSync(hostWorkspace) ? [`workspace ${hostWorkspace}`] : [])
  ]
  const waited = await waitFor(() => left().length === 0, boundMs, 1000)
  const remaining = left()
  for (const c of docker("ps", "-aq", "--filter", label).split("\n").filter((id) => id !== "")) {
    docker("rm", "-f", "-v", c)
  }
  if (hostWorkspace !== "") rmSync(hostWorkspace, { recursive: true, force: true })
  return reapRow("owner-kill: Docker owner SIGKILLed, container gone after", waited, boundMs, remaining)
}

export const ownerKillRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  // Both at once: each waits up to the reap target (a little more, to tell "late" from "never").
  const bound = Math.min((REAP_TARGET_S + 5) * 1000, Math.max(5_000, budget.left() - 30_000))
  const bounded = quick ? Math.min(bound, 20_000) : bound
  return Promise.all([
    localKill(bounded).catch((e) => broken("owner-kill: Local owner SIGKILLed, everything gone after", e)),
    dockerKill(bounded).catch((e) => broken("owner-kill: Docker owner SIGKILLed, container gone after", e))
  ])
}
