/**
 * Cloud-provider rows of `npm run bench`: each runtime from start to READY through its provider's
 * own SDK against that provider's stand-in (test/providers/<name>: the provider's real API, every
 * sandbox a container on this engine), beside the floor of the same machine measured in the same
 * run: a bare container of the same image from create to its first HTTP 200. The ratio is our
 * overhead on a container start: the SDK's calls, the payload and key hand-over, and the action
 * server's own start. A real provider adds its scheduling and network on top; these rows say what
 * is ours.
 */
import { Effect, type Layer, Redacted } from "effect"
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
import { timeStarts } from "./startup.ts"
import { type Sample, skipped, timeRuns } from "./stats.ts"

type Record = (name: string, sample: Sample, baseline: string, base: Sample, note?: string) => void

/** A provider on its stand-in: the image its sandboxes run, the runtime layer, and how to stop it. */
export interface OnStandIn {
  readonly image: string
  readonly layer: () => Layer.Layer<Runtime, unknown>
  readonly close: () => Promise<unknown>
}

const RUNS = 10

/** Time `RUNS` starts of a provider's runtime beside `RUNS` bare containers of its image. */
const providerRow = async (record: Record, name: string, provider: OnStandIn) => {
  try {
    const floor = await timeRuns(RUNS, 1, () => bareContainer(provider.image), (ms) => ms)
    const ready = await timeStarts(RUNS, provider.layer)
    record(`${name}: start to READY (stand-in)`, ready, "bare container to first HTTP 200", floor)
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
    close: () => standIn.close()
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
