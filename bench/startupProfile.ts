/**
 * `node bench/startupProfile.ts [runs]`: where a DockerRuntime start's time goes, one start at a
 * time, each phase's end (ms from the start) from the runtime's own StartProgress events and the
 * engine's timestamps (container created, started, the server's "listening" line), each start
 * followed by a bare container's create + start + first HTTP 200 (so both see the same load).
 */
import Docker from "dockerode"
import { Duration, Effect, Layer, ManagedRuntime } from "effect"
import { DockerRuntime } from "../src/docker.ts"
import { Runtime } from "../src/index.ts"
import { StartProgress } from "../src/services/StartProgress.ts"
import { bareContainer, benchBaseImage } from "./docker.ts"

const docker = new Docker()
const runs = Number(process.argv[2] ?? 5)
const base = benchBaseImage()
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<Record<string, number>> = []
const bare: Array<number> = []
let image = ""
for (let i = 0; i < runs + 1; i++) {
  const phases: Record<string, number> = {}
  const layer = DockerRuntime.layer({ baseImage: base }).pipe(
    Layer.provide(StartProgress.layer((event) =>
      Effect.sync(() => {
        phases[event.phase] ??= Duration.toMillis(event.elapsed)
      })
    ))
  )
  const runtime = ManagedRuntime.make(layer)
  const t0 = Date.now()
  const rt = await runtime.runPromise(Runtime)
  const ready = Date.now() - t0
  const container = docker.getContainer(`effect-sandbox-${rt.info.id}`)
  const info = await container.inspect()
  image = info.Config.Image
  const log = (await container.logs({ stdout: true, timestamps: true })).toString("utf8")
  const listening = /(\d{4}-\d\d-\d\dT[\d:.]+Z) effect-sandbox-server listening/.exec(log)?.[1]
  await runtime.dispose()
  if (i === 0) continue // the first start builds or finds the image
  bare.push(await bareContainer(image))
  const at = (iso: string | undefined) => iso === undefined ? NaN : Date.parse(iso) - t0
  rows.push({
    ...phases,
    containerCreated: at(info.Created),
    containerStarted: at(info.State.StartedAt),
    serverListening: at(listening),
    ready
  })
}
const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].sort((a, b) =>
  median(rows.map((r) => r[a]!)) - median(rows.map((r) => r[b]!))
)
for (const key of keys) {
  console.log(
    `${key.padEnd(22)} p50 ${median(rows.map((r) => r[key]!)).toFixed(0).padStart(6)} ms   ${
      rows.map((r) => r[key]!.toFixed(0)).join(" ")
    }`
  )
}
console.log(`bare container to 200 p50 ${median(bare).toFixed(0)} ms   ${bare.map((b) => b.toFixed(0)).join(" ")}`)
