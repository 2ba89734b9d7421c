/**
 * Docker rows of `npm run bench`, each beside its floor measured in the same run:
 * a bare container (same image, a trivial Node HTTP server) from create to its
 * first HTTP 200 through the published port. The start rows are also printed beside
 * the same bare container on the sandboxes' own network: a user-defined bridge, which
 * their isolation needs, costs every start the engine's own work (its embedded DNS),
 * and that line shows what is left of a start that is ours.
 */
import Docker from "dockerode"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { DockerRuntime, type DockerSandboxPool } from "../src/docker.ts"
import { CmdRunAction, Runtime } from "../src/index.ts"
import { timedStart, timeStarts } from "./startup.ts"
import { QUICK, type Sample, single, skipped, timeAlternating, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const docker = new Docker()

/**
 * A bare HTTP container (same image, a trivial Node server), created, started, answering 200; returns
 * ms to the 200. On the engine's default bridge unless `network` names another.
 */
const runBareContainer = async (image: string, network?: string) => {
  const started = performance.now()
  const container = await docker.createContainer({
    Image: image,
    Cmd: ["/opt/effect-sandbox/bin/node", "-e", "require('http').createServer((q,s)=>s.end('ok')).listen(8000)"],
    ExposedPorts: { "8000/tcp": {} },
    HostConfig: {
      PortBindings: { "8000/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] },
      ...(network === undefined ? {} : { NetworkMode: network })
    }
  })
  try {
    await container.start()
    const port = (await container.inspect()).NetworkSettings.Ports["8000/tcp"]![0]!.HostPort
    while (true) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) })
        if (response.ok) break
      } catch {
        // docker-proxy accepts before the server listens
      }
    }
    return { container, ms: performance.now() - started }
  } catch (error) {
    await container.remove({ force: true })
    throw error
  }
}

/** create + start + first 200 of a bare HTTP container, then remove it; returns ms to the 200. */
export const bareContainer = async (image: string, network?: string): Promise<number> => {
  const { container, ms } = await runBareContainer(image, network)
  await container.remove({ force: true })
  return ms
}

/** The clock ticks a second of /proc/stat's counts (USER_HZ). */
const TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100)

/** The machine's busy CPU so far (ms, all cores): /proc/stat's first line but idle and iowait. */
const busyCpuMs = (): number => {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  return (user + nice + system + irq + softirq + steal) * 1_000 / TICKS
}

/**
 * The machine's CPU (ms, every process: this one, the engine, the container's, the watchdog) per
 * run of `once`, over `runs` one after another: what a start and release costs a host that starts
 * many, where a time to READY shows only the path one start waits on.
 */
const cpuPerRun = async (runs: number, once: () => Promise<unknown>): Promise<Sample> => {
  const before = busyCpuMs()
  for (let run = 0; run < runs; run++) await once()
  return single((busyCpuMs() - before) / runs)
}

const IDLE_SANDBOXES = QUICK ? 3 : 50
/** How many start at once in the concurrent-start row (a quick run only checks the path). */
const CONCURRENT = QUICK ? 3 : 20
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

/** ms until `CONCURRENT` runs of `once`, all begun at once, have all ended. */
const allAtOnce = async (once: () => Promise<unknown>): Promise<Sample> => {
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENT }, once))
  return single(performance.now() - started)
}

/**
 * Memory per idle sandbox with 50 at once (the server and its shell, the browser, kernel, MCP and
 * editor not yet used), beside 50 bare containers each running a trivial Node HTTP server: the
 * mean proportional set size of a container's processes, after a few seconds' rest.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, QUICK ? 300 : 3_000))

const idleMemoryRow = async (record: Record, layer: () => Layer.Layer<Runtime, unknown>, image: string) => {
  const bares = await Promise.all(Array.from({ length: IDLE_SANDBOXES }, () => runBareContainer(image)))
  await settle()
  const bare = await Promise.all(bares.map(({ container }) => containerProcessMemory(container.id)))
  await Promise.all(bares.map(({ container }) => container.remove({ force: true })))
  const runtimes = Array.from({ length: IDLE_SANDBOXES }, () => ManagedRuntime.make(layer()))
  try {
    const all = await Promise.all(runtimes.map((r) => r.runPromise(Runtime)))
    await settle()
    const ours = await Promise.all(all.map((r) => containerProcessMemory(`effect-sandbox-${r.info.id}`)))
    const pss = mean(ours.map((m) => m.pssMb))
    const barePss = mean(bare.map((m) => m.pssMb))
    // Not times: the row's "p50" columns carry MB.
    record(
      `DockerRuntime: memory per idle sandbox (${IDLE_SANDBOXES} at once, MB)`,
      { p50: pss, p95: Math.max(...ours.map((m) => m.pssMb)) },
      "bare `node` HTTP server container (MB)",
      { p50: barePss, p95: Math.max(...bare.map((m) => m.pssMb)) },
      `PSS of the container's processes; private ${mean(ours.map((m) => m.anonMb)).toFixed(1)} MB vs ${
        mean(bare.map((m) => m.anonMb)).toFixed(1)
      } MB; target <= 25 MB`
    )
  } finally {
    await Promise.all(runtimes.map((r) => r.dispose()))
  }
}

/**
 * The memory a container's processes cost the host, in MB: their proportional set size (private
 * pages, plus shared pages divided among their sharers: the Node binary's text, shared through the
 * page cache by every container of the image, counts once across them) and their private resident
 * pages (RssAnon), summed over the container's processes (docker-init, the server, its shell).
 */
export const containerProcessMemory = async (id: string): Promise<{ pssMb: number; anonMb: number }> => {
  const top = await docker.getContainer(id).top({ ps_args: "-o pid" })
  let pss = 0
  let anon = 0
  for (const [pid] of top.Processes ?? []) {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0)
    anon += Number(/^RssAnon:\s+(\d+)/m.exec(status)?.[1] ?? 0)
  }
  return { pssMb: pss / 1024, anonMb: anon / 1024 }
}

const cgroupMemoryMb = async (id: string): Promise<number> => {
  const stats = await docker.getContainer(id).stats({ stream: false })
  return (stats.memory_stats.usage - (stats.memory_stats.stats?.["cache"] ?? 0)) / 2 ** 20
}

/** The base image the runtime image is built from in benches (scripts/base-image.sh prints it last). */
export const benchBaseImage = (): string =>
  spawnSync(join(import.meta.dirname, "..", "scripts", "base-image.sh"), { encoding: "utf8" }).stdout
    .trim().split("\n").at(-1)!

export const dockerRows = async (record: Record, echoInProcess: Sample) => {
  if (spawnSync("docker", ["info"], { stdio: "ignore" }).status !== 0) {
    skipped("Docker rows skipped: no engine answers `docker info`")
    return
  }
  const base = benchBaseImage()
  const layer = () => DockerRuntime.layer({ baseImage: base })

  // One start builds (or finds) the runtime image; the rows measure the cached case.
  const first = ManagedRuntime.make(layer())
  const rt = await first.runPromise(Runtime)
  const inspected = await docker.getContainer(`effect-sandbox-${rt.info.id}`).inspect()
  const image = inspected.Config.Image
  // The sandboxes' network (src/engines/docker/network.ts), by the id the sandbox joined.
  const network = inspected.HostConfig.NetworkMode!
  // As the in-process figure was: at its steady state (bench/main.ts, `WARMUP`).
  const echo = await timeRuns(
    300,
    2_000,
    () => first.runPromise(rt.runCommand(new CmdRunAction({ command: "echo hi", blocking: true })))
  )
  await first.dispose()
  record("DockerRuntime: echo hi round trip", echo, "CliRuntime in-process", echoInProcess, "target p50 <= 2 ms")

  const { floor, cold, onNetwork } = await timeAlternating(10, 1, {
    floor: { reported: () => bareContainer(image) },
    cold: timedStart(layer),
    onNetwork: { reported: () => bareContainer(image, network) }
  })
  record(
    "DockerRuntime: start to READY (cached image)",
    cold,
    "bare container to first HTTP 200",
    floor,
    "target <= 600 ms"
  )
  record(
    "DockerRuntime: start to READY (cached image)",
    cold,
    "the same, on the sandboxes' network",
    onNetwork,
    "an isolated user-defined bridge, as the sandboxes'"
  )

  const cpuRuns = QUICK ? 2 : 10
  const bareCpu = await cpuPerRun(cpuRuns, () => bareContainer(image))
  const cpu = await cpuPerRun(cpuRuns, () => Effect.runPromise(Effect.scoped(Layer.build(layer()))))
  record(
    "DockerRuntime: machine CPU per start and release (ms)",
    cpu,
    "bare container: create, start, 200, remove",
    bareCpu,
    "busy CPU of the whole machine over sequential runs, divided by their number"
  )

  const pool = ManagedRuntime.make(DockerRuntime.layerPool({ baseImage: base, poolSize: 2 }))
  const poolContext = await pool.runPromise(Effect.context<DockerSandboxPool>())
  // Each acquisition finds the pool refilled, as between real sessions.
  const warm = await timeStarts(
    10,
    () => DockerRuntime.layerWarm().pipe(Layer.provide(Layer.succeedContext(poolContext))),
    QUICK ? 300 : 1_500
  )
  await pool.dispose()
  record("DockerRuntime: acquire from warm pool", warm, "bare container to first HTTP 200", floor, "target <= 20 ms")

  // 20 at once: total time, and each container's memory once idle.
  const runtimes = Array.from({ length: CONCURRENT }, () => ManagedRuntime.make(layer()))
  const started = performance.now()
  const all = await Promise.all(runtimes.map((r) => r.runPromise(Runtime)))
  const total = performance.now() - started
  const memory = await Promise.all(all.map((r) => cgroupMemoryMb(`effect-sandbox-${r.info.id}`)))
  await Promise.all(runtimes.map((r) => r.dispose()))
  const bareTotal = await allAtOnce(() => bareContainer(image))
  const bareOnNetwork = await allAtOnce(() => bareContainer(image, network))
  const perSandbox = `${(memory.reduce((a, b) => a + b, 0) / memory.length).toFixed(1)} MB per idle sandbox`
  const concurrent = `DockerRuntime: ${CONCURRENT} concurrent starts (total)`
  record(concurrent, single(total), `${CONCURRENT} bare containers to HTTP 200`, bareTotal, perSandbox)
  record(concurrent, single(total), "the same, on the sandboxes' network", bareOnNetwork, perSandbox)

  await idleMemoryRow(record, layer, image)
}
