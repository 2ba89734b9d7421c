/**
 * Runtime API row of `npm run bench`: 20 RemoteRuntimes started at once through
 * `effect-sandbox-runtime-api` on this machine's Docker engine, start to READY per runtime
 * (p50/p95), beside 20 DockerRuntimes started at once in the same run: the API's cost is one more
 * HTTP hop and its `/runtime/{id}` polling.
 */
import { Effect, Layer, ManagedRuntime, Redacted, Schedule } from "effect"
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { removeContainersNamed, startApiServer } from "../scripts/runtimeApiProcess.ts"
import { DockerRuntime } from "../src/docker.ts"
import { Runtime } from "../src/index.ts"
import { RemoteRuntime } from "../src/remote.ts"
import { percentiles, QUICK, type Sample, skipped } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

const CONCURRENT = QUICK ? 3 : 20

/** The API server's container name prefix here: what is left after a failed run is removed by it. */
const PREFIX = "bench-rapi"

/** Start `CONCURRENT` runtimes of `layer` at once; each one's ms to READY, then all released. */
const startTogether = async (layer: () => Layer.Layer<Runtime, unknown>) => {
  const runtimes = Array.from({ length: CONCURRENT }, () => ManagedRuntime.make(layer()))
  const times = await Promise.all(runtimes.map(async (runtime) => {
    const started = performance.now()
    await runtime.runPromise(Runtime)
    return performance.now() - started
  }))
  await Promise.all(runtimes.map((runtime) => runtime.dispose()))
  return percentiles(times)
}

export const remoteRows = async (record: Record) => {
  if (spawnSync("docker", ["info"], { stdio: "ignore" }).status !== 0) {
    skipped("runtime API rows skipped: no engine answers `docker info`")
    return
  }
  const base = spawnSync(join(import.meta.dirname, "..", "scripts", "base-image.sh"), { encoding: "utf8" }).stdout
    .trim().split("\n").at(-1)!
  const key = randomBytes(16).toString("hex")
  const server = await startApiServer(["--container-name-prefix", PREFIX], {
    EFFECT_SANDBOX_API_KEY: key,
    SANDBOX_BASE_CONTAINER_IMAGE: base
  })
  try {
    const remote = () =>
      RemoteRuntime.layer({
        apiUrl: server.base,
        apiKey: Redacted.make(key),
        sessionId: `bench-${randomBytes(5).toString("hex")}`,
        baseImage: base,
        schedules: { podStatus: Schedule.spaced("100 millis") }
      })
    // One start builds (or finds) the runtime image through /build; the row measures the cached case.
    await Effect.runPromise(Effect.scoped(Layer.build(remote())))
    const throughApi = await startTogether(remote)
    const direct = await startTogether(() => DockerRuntime.layer({ baseImage: base }))
    record(
      `RemoteRuntime: ${CONCURRENT} starts at once, each to READY`,
      throughApi,
      `${CONCURRENT} DockerRuntime starts at once`,
      direct
    )
  } finally {
    await server.kill()
    removeContainersNamed(PREFIX)
  }
}
