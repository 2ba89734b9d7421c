/**
 * Group 5, start/stop cycles: 1,000 LocalRuntime and 100 DockerRuntime starts and
 * releases (four at a time, Local and Docker side by side), then a count of what
 * they left: processes carrying their session ids, containers, networks, volumes
 * and dangling runtime images that appeared, and entries in the run's private TMPDIR.
 */
import { type Layer, ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { DockerRuntime } from "../../src/docker.ts"
import { SANDBOX_NETWORK } from "../../src/engines/docker/network.ts"
import { Runtime } from "../../src/index.ts"
import { LocalRuntime } from "../../src/local.ts"
import { workspaceParentPath } from "../../src/runtime/hostWorkspace.ts"
import { baseImage } from "./ownerProcess.ts"
import { atMost, type Budget, type GroupContext, report, type Row } from "./rows.ts"

/** Starts in flight at once, per runtime kind (a start mostly waits on a child process or the engine). */
const CONCURRENCY = 6

/** Start and release runtimes until `count` are done or the budget ends; the session ids seen. */
const cycle = async (count: number, budget: Budget, layer: () => Layer.Layer<Runtime, unknown>) => {
  const ids: Array<string> = []
  let next = 0
  let failures = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count && !budget.over) {
      next++
      const runtime = ManagedRuntime.make(layer())
      try {
        ids.push((await runtime.runPromise(Runtime)).info.id)
      } catch (error) {
        if (failures++ < 3) console.error(`  start failed: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        await runtime.dispose()
      }
    }
  }))
  return { ids, failures, seconds: (performance.now() - started) / 1000 }
}

/** Live processes whose environment names one of `ids` (as RUNTIME_ID or the session marker). */
const processesOf = (ids: ReadonlySet<string>): number => {
  let found = 0
  for (const name of readdirSync("/proc")) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0")
      const named = env.some((e) =>
        (e.startsWith("RUNTIME_ID=") && ids.has(e.slice(11))) ||
        (e.startsWith("EFFECT_SANDBOX_SESSION=") && ids.has(e.slice(23).split("/")[0]!))
      )
      if (named) found++
    } catch {
      // gone, or not ours
    }
  }
  return found
}

const docker = (...args: Array<string>): Array<string> =>
  spawnSync("docker", args, { encoding: "utf8" }).stdout.split("\n").filter((line) => line.trim() !== "")

/** What the engine holds that a leak would add to. */
const engineState = () => ({
  // Not the sandboxes' network: made by the first sandbox on the engine and kept by design (network.ts).
  networks: new Set(
    docker("network", "ls", "--format", "{{.ID}} {{.Name}}").filter((line) => !line.endsWith(` ${SANDBOX_NETWORK}`))
  ),
  volumes: new Set(docker("volume", "ls", "-q")),
  // Only runtime images (the ImageBuilder labels them): other programs on a shared engine build images too.
  danglingImages: new Set(
    docker("images", "-q", "--filter", "dangling=true", "--filter", "label=effect-sandbox.runtime-image")
  )
})

/**
 * The cycles done: all that were planned, or as many as the group's share of the budget
 * allowed (the leftover rows are the guarantee; this one says how much they cover).
 */
const completed = (name: string, done: number, planned: number, budget: Budget): Row => ({
  name,
  value: done,
  unit: "cycles",
  target: `${planned}, or the budget (${(budget.ms / 1000).toFixed(0)} s)`,
  pass: done === planned || (budget.over && done > 0)
})

/**
 * What the runtimes left in the private TMPDIR: its entries, and those of the owner's directory of
 * workspaces, which stays for the next workspace (runtime/hostWorkspace.ts).
 */
const leftoverTempDirs = () => {
  const parent = workspaceParentPath()
  const inParent = existsSync(parent) ? readdirSync(parent).length : 0
  return readdirSync(dirname(parent)).filter((entry) => entry !== basename(parent)).length + inParent
}

const added = (before: ReadonlySet<string>, after: ReadonlySet<string>) =>
  [...after].filter((x) => !before.has(x)).length

export const cyclesRows = async ({ budget, quick }: GroupContext): Promise<ReadonlyArray<Row>> => {
  const localCount = quick ? 20 : 1000
  const dockerCount = quick ? 4 : 100
  // Every temp dir of these runtimes (and of their servers, which inherit it) lands here.
  const privateTmp = mkdtempSync(join(tmpdir(), "chaos-cycles-"))
  const savedTmp = process.env["TMPDIR"]
  process.env["TMPDIR"] = privateTmp
  try {
    const image = baseImage()
    const engineBefore = engineState()
    const [local, dock] = await Promise.all([
      cycle(localCount, budget, () => LocalRuntime.layer()),
      cycle(
        dockerCount,
        budget,
        () => DockerRuntime.layer({ baseImage: image, sessionId: `chaos-cycle-${randomBytes(5).toString("hex")}` })
      )
    ])
    const engineAfter = engineState()
    const dockerIds = new Set(dock.ids)
    const containers = docker(
      "ps",
      "-a",
      "--filter",
      "label=effect-sandbox.managed=true",
      "--format",
      "{{.Label \"effect-sandbox.session\"}}"
    ).filter((session) => dockerIds.has(session)).length
    return [
      completed("cycles: Local start/stop cycles", local.ids.length, localCount, budget),
      report("cycles: Local cycles per second", local.ids.length / local.seconds, "cycles/s"),
      atMost("cycles: Local start failures", local.failures, "starts", 0),
      atMost("cycles: Local leftover processes", processesOf(new Set(local.ids)), "processes", 0),
      completed("cycles: Docker start/stop cycles", dock.ids.length, dockerCount, budget),
      report("cycles: Docker cycles per second", dock.ids.length / dock.seconds, "cycles/s"),
      atMost("cycles: Docker start failures", dock.failures, "starts", 0),
      atMost("cycles: Docker leftover containers", containers, "containers", 0),
      atMost("cycles: Docker leftover networks", added(engineBefore.networks, engineAfter.networks), "networks", 0),
      atMost("cycles: Docker leftover volumes", added(engineBefore.volumes, engineAfter.volumes), "volumes", 0),
      atMost(
        "cycles: new dangling runtime images",
        added(engineBefore.danglingImages, engineAfter.danglingImages),
        "images",
        0
      ),
      atMost("cycles: leftover temp dirs (Local and Docker)", leftoverTempDirs(), "dirs", 0)
    ]
  } finally {
    if (savedTmp === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = savedTmp
    rmSync(privateTmp, { recursive: true, force: true })
  }
}
