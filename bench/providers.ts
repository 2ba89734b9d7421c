/**
 * Cloud-provider rows of `npm run bench`: each runtime from start to READY through its provider's
 * own SDK against that provider's stand-in (test/providers/<name>: the provider's real API, every
 * sandbox a container on this engine), beside the floor of the same machine measured in the same
 * run: a bare container of the same image from create to its first HTTP 200. The ratio is our
 * overhead on a container start: the SDK's calls, the payload and key hand-over, and the action
 * server's own start. A real provider adds its scheduling and network on top; these rows say what
 * is ours. A stand-in's create is itself more than a bare container's start (the container is
 * made and started, then the SDK learns it runs): a second row puts the start beside the provider's
 * create alone, timed from the same starts' spans, so what we add on top of it shows.
 */
import { Effect, Layer, Redacted, Tracer } from "effect"
import { spawnSync } from "node:child_process"
import { DaytonaRuntime, DEFAULT_SNAPSHOT } from "../src/daytona.ts"
import { E2BRuntime } from "../src/e2b.ts"
import type { Runtime } from "../src/index.ts"
import { ModalRuntime } from "../src/modal.ts"
import { startStandIn as startDaytona } from "../test/providers/daytona/server.ts"
import { snapshotImage } from "../test/providers/daytona/snapshot.ts"
import {
  API_KEY as E2B_KEY,
  runtimeImage,
  standinOptions,
  templates as e2bTemplates
} from "../test/providers/e2b/fixture.ts"
import { startStandin as startE2B } from "../test/providers/e2b/server.ts"
import { standinOptions as modalOptions, startModalStandin } from "../test/providers/modal/fixture.ts"
import { blueprints, runloopLayer } from "../test/providers/runloop/fixture.ts"
import { startStandIn as startRunloop } from "../test/providers/runloop/server.ts"
import { bareContainer, benchBaseImage } from "./docker.ts"
import { timedStart } from "./startup.ts"
import { percentiles, QUICK, type Sample, skipped, timeAlternating } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

/** A provider on its stand-in: the image its sandboxes run, the runtime layer, and how to stop it. */
export interface OnStandIn {
  readonly image: string
  readonly layer: () => Layer.Layer<Runtime, unknown>
  readonly close: () => Promise<unknown>
  /**
   * The spans of a start that are the provider's create until the sandbox runs (`name operation`):
   * the hosted create, and where the driver waits for the sandbox to run in its launch, that wait.
   */
  readonly creates?: RegExp
}

/** The hosted runtime's create: the provider's create call, and whatever its driver waits for there. */
const HOSTED_CREATE = /^hosted\.create /

/** The layer with a tracer that adds the milliseconds of each start's `creates` spans to `created`. */
const timingCreates = (provider: OnStandIn, created: Array<number>) => () => {
  let total = 0
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      const end = span.end.bind(span)
      span.end = (endTime, exit) => {
        end(endTime, exit)
        const name = `${span.name} ${String(span.attributes.get("operation") ?? "")}`
        if ((provider.creates ?? HOSTED_CREATE).test(name)) total += Number(endTime - span.startTime) / 1e6
        if (span.name === "hosted.provision") created.push(total)
      }
      return span
    }
  })
  return provider.layer().pipe(Layer.provide(Layer.succeed(Tracer.Tracer)(tracer)))
}

const RUNS = 10

/** Time `RUNS` starts of a provider's runtime beside `RUNS` bare containers of its image. */
const providerRow = async (record: Record, name: string, provider: OnStandIn) => {
  try {
    const created: Array<number> = []
    const { floor, ready } = await timeAlternating(RUNS, 1, {
      floor: { reported: () => bareContainer(provider.image) },
      ready: timedStart(timingCreates(provider, created))
    })
    // The warm-up start's is left out, as its READY is.
    const create = percentiles(created.slice(QUICK ? 0 : 1))
    record(`${name}: start to READY (stand-in)`, ready, "bare container to first HTTP 200", floor)
    record(`${name}: the provider's create alone (stand-in)`, create, "bare container to first HTTP 200", floor)
    record(`${name}: start to READY, × its create (stand-in)`, ready, "the provider's create alone", create)
  } finally {
    await provider.close()
  }
}

const e2b = async (): Promise<OnStandIn> => {
  const image = await runtimeImage()
  const standin = await startE2B({ apiKey: E2B_KEY, templates: e2bTemplates(image) })
  return {
    image,
    layer: () => E2BRuntime.layer(standinOptions(standin)),
    close: () => standin.close()
  }
}

const daytona = async (): Promise<OnStandIn> => {
  const image = await Effect.runPromise(snapshotImage(benchBaseImage()))
  const standIn = await startDaytona({ snapshots: { [DEFAULT_SNAPSHOT]: image } })
  return {
    image,
    layer: () => DaytonaRuntime.layer({ apiKey: Redacted.make(standIn.apiKey), apiUrl: standIn.apiUrl }),
    close: () => standIn.close()
  }
}

const modal = async (): Promise<OnStandIn> => {
  const standin = await startModalStandin()
  return {
    image: await runtimeImage(),
    layer: () => ModalRuntime.layer(modalOptions(standin)),
    close: () => standin.close()
  }
}

const runloop = async (): Promise<OnStandIn> => {
  const standIn = await startRunloop({ blueprints: await blueprints() })
  return {
    image: await runtimeImage(),
    layer: () => runloopLayer(standIn),
    close: () => standIn.close(),
    // A devbox is made at once and boots after: the launch waits for it to run first.
    creates: /^hosted\.create |^provider\.call wait for devbox \S+ to run$/
  }
}

/** Each provider's stand-in, started on demand. */
export const standIns: Readonly<globalThis.Record<string, () => Promise<OnStandIn>>> = {
  e2b,
  daytona,
  modal,
  runloop
}

export const providerRows = async (record: Record) => {
  if (spawnSync("docker", ["info"], { stdio: "ignore" }).status !== 0) {
    skipped("provider rows skipped: the stand-ins run sandboxes on Docker and no engine answers `docker info`")
    return
  }
  await providerRow(record, "E2BRuntime", await e2b())
  await providerRow(record, "DaytonaRuntime", await daytona())
  await providerRow(record, "ModalRuntime", await modal())
  await providerRow(record, "RunloopRuntime", await runloop())
}
