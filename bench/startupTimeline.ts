/**
 * `node bench/startupTimeline.ts [n]`: one DockerRuntime start (or `n` at once) as a timeline, ms
 * from the layers' build: every engine call (docker-modem's `dial` wrapped: method, path, when it
 * was sent and how long it took), the runtime's StartProgress events, and for the first three
 * containers the engine's `Created` / `State.StartedAt` and their log lines. With `n` > 3, each
 * phase's and each kind of engine call's p50 and max instead. The first start builds or finds the
 * image and is not shown. docs/design-notes.md, "A DockerRuntime start, second round".
 */
import Docker from "dockerode"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createRequire } from "node:module"
import { DockerRuntime } from "../src/docker.ts"
import { Runtime } from "../src/index.ts"
import { StartProgress } from "../src/services/StartProgress.ts"
import { benchBaseImage } from "./docker.ts"
import { percentiles } from "./stats.ts"

type Dial = (options: { method: string; path: string }, callback: (error: unknown, data: unknown) => void) => unknown
const { prototype: modem } = createRequire(import.meta.url)("docker-modem") as { prototype: { dial: Dial } }

const events: Array<[number, string]> = []
let t0 = 0
const now = () => performance.now() - t0
const dial = modem.dial
modem.dial = function(this: unknown, options, callback) {
  const sent = now()
  const what = `${options.method} ${options.path.split("?")[0]}`
  return dial.call(this, options, (error, data) => {
    events.push([sent, `  engine ${what} -> ${(now() - sent).toFixed(0)} ms`])
    callback(error, data)
  })
}

const n = Number(process.argv[2] ?? 1)
const base = benchBaseImage()
const warm = ManagedRuntime.make(DockerRuntime.layer({ baseImage: base }))
await warm.runPromise(Runtime)
await warm.dispose()
events.length = 0

const docker = new Docker()
t0 = performance.now()
const wall0 = Date.now()
const runtimes = Array.from({ length: n }, (_, i) =>
  ManagedRuntime.make(
    DockerRuntime.layer({ baseImage: base }).pipe(
      Layer.provide(StartProgress.layer((event) =>
        Effect.sync(() => {
          events.push([now(), `#${i} ${event.phase} ${event.detail}`.slice(0, 90)])
        })
      ))
    )
  ))
const started = await Promise.all(runtimes.map((runtime) => runtime.runPromise(Runtime)))
const total = now()
for (const rt of started.slice(0, 3)) {
  const container = docker.getContainer(`effect-sandbox-${rt.info.id}`)
  const info = await container.inspect()
  const short = rt.info.id.slice(0, 6)
  events.push([Date.parse(info.Created) - wall0, `  [engine] created ${short}`])
  events.push([Date.parse(info.State.StartedAt) - wall0, `  [engine] started ${short}`])
  const log = (await container.logs({ stdout: true, stderr: true, timestamps: true })).toString("utf8")
  for (const line of log.matchAll(/(\d{4}-\d\d-\d\dT[\d:.]+Z) (.{0,60})/g)) {
    events.push([Date.parse(line[1]!) - wall0, `  [log ${short}] ${line[2]}`])
  }
}
await Promise.all(runtimes.map((runtime) => runtime.dispose()))

if (n <= 3) {
  for (const [at, what] of events.sort((a, b) => a[0] - b[0])) console.log(at.toFixed(0).padStart(6), what)
} else {
  const groups: Record<string, Array<number>> = {}
  for (const [at, what] of events) {
    const phase = /^#\d+ (\S+)/.exec(what)?.[1]
    if (phase !== undefined) (groups[`phase ${phase} (ends at)`] ??= []).push(at)
    const call = /engine (\S+ \S+) -> (\d+)/.exec(what)
    if (call !== null) {
      const kind = call[1]!.replace(/[0-9a-f]{64}|effect-sandbox-[0-9a-f-]{36}/g, "<id>")
      ;(groups[`call ${kind} (takes)`] ??= []).push(Number(call[2]))
    }
  }
  for (const [key, xs] of Object.entries(groups)) {
    console.log(
      `${key.padEnd(64)} n ${xs.length} p50 ${percentiles(xs).p50.toFixed(0)} max ${Math.max(...xs).toFixed(0)}`
    )
  }
}
console.log(`READY after ${total.toFixed(0)} ms for ${n}`)
