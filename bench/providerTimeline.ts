/**
 * `node bench/providerTimeline.ts [provider ...] [--runs n]`: cloud starts on their stand-ins as
 * timelines, ms from the layer's build: every span a start makes (each provider call by its
 * operation, the hosted runtime's steps, the `/alive` attempts and the capabilities read), the
 * runtime's StartProgress events, and READY. The first start of each provider is a warm-up (the
 * image, the SDK's modules) and not shown. docs/design-notes.md, "Cloud stand-ins: what we add to
 * the provider's create".
 */
import { Effect, Layer, ManagedRuntime, Tracer } from "effect"
import { Runtime } from "../src/index.ts"
import { StartProgress } from "../src/services/StartProgress.ts"
import { type OnStandIn, standIns } from "./providers.ts"

const argv = process.argv.slice(2)
const runsAt = argv.indexOf("--runs")
const runs = runsAt === -1 ? 2 : Number(argv[runsAt + 1])
const chosen = argv.filter((arg, i) => !arg.startsWith("--") && argv[i - 1] !== "--runs")

/** Effect's clock (spans' start and end): nanoseconds since the epoch. */
const clock = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6))

const ms = (nanos: bigint) => Number(nanos / 1000n) / 1000

/** One start's timeline: each span as `start +duration name`, in the order they began. */
const timeline = async (provider: OnStandIn) => {
  const spans: Array<Tracer.NativeSpan> = []
  const events: Array<[number, string]> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  const t0 = clock()
  const since = (nanos: bigint) => ms(nanos - t0)
  const runtime = ManagedRuntime.make(
    provider.layer().pipe(
      Layer.provide(
        StartProgress.layer((event) => Effect.sync(() => void events.push([since(clock()), `== ${event.phase}`])))
      ),
      Layer.provide(Layer.succeed(Tracer.Tracer)(tracer))
    )
  )
  await runtime.runPromise(Runtime)
  const ready = since(clock())
  await runtime.dispose()
  for (const span of spans) {
    if (span.status._tag !== "Ended" || since(span.startTime) > ready) continue
    const operation = span.attributes.get("operation") ?? span.attributes.get("url.full") ?? ""
    const took = ms(span.status.endTime - span.startTime)
    events.push([since(span.startTime), `${took.toFixed(0).padStart(5)} ms  ${span.name} ${String(operation)}`])
  }
  events.sort((a, b) => a[0] - b[0])
  return { ready, lines: events.map(([at, what]) => `${at.toFixed(0).padStart(6)}  ${what}`) }
}

for (const [name, make] of Object.entries(standIns)) {
  if (chosen.length > 0 && !chosen.includes(name)) continue
  const provider = await make()
  try {
    await timeline(provider)
    for (let i = 0; i < runs; i++) {
      const { lines, ready } = await timeline(provider)
      console.log(`\n${name}, start ${i + 1}: READY at ${ready.toFixed(0)} ms (load ${await load()})`)
      console.log(lines.join("\n"))
    }
  } finally {
    await provider.close()
  }
}

async function load() {
  const { readFile } = await import("node:fs/promises")
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ")
}
