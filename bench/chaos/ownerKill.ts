/**
 * Group 4, owner SIGKILL: an owner process starts a runtime and is killed with
 * SIGKILL (no finalizer runs). Everything it started must go away on its own, with
 * no other runtime starting: for Local the server and its processes, the temp
 * workspace and the state dir; for Docker the container and its temp workspace,
 * within 60 s; for an image that sets our labels, nothing it names (hostileLabels.ts).
 * Whatever is still there at the end is removed by the group itself.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { hostileLabelRows, ROW_HARM, ROW_REAP } from "./hostileLabels.ts"
import { baseImage, REAP_TARGET_S, reapRow, startOwner } from "./ownerProcess.ts"
import { broken, type GroupContext, type Row, waitFor } from "./rows.ts"
import { processesWithEnv } from "./server.ts"

const envOf = (pid: number, name: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").find((e) => e.startsWith(`${name}=`))?.slice(
      name.length + 1
    )
  } catch {
    return undefined
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
  const rows = await Promise.all([
    localKill(bounded).catch((e) => [broken("owner-kill: Local owner SIGKILLed, everything gone after", e)]),
    dockerKill(bounded).catch((e) => [broken("owner-kill: Docker owner SIGKILLed, container gone after", e)]),
    hostileLabelRows(bounded).catch((e) => [broken(ROW_HARM, e), broken(ROW_REAP, e)])
  ])
  return rows.flat()
}
