/**
 * Progress while a runtime starts, for someone to watch: what the start is doing now (pulling the
 * base image, building the runtime image step by step, creating the sandbox, starting its server,
 * waiting for it to answer), with the detail that says how far it got and the time since the start
 * began. `Runtime.status` says the same in OpenHands' coarse words (BUILDING_RUNTIME, ...), but a
 * runtime's status stream exists only once its layer is built, after the start; these events are
 * delivered while it runs, to a listener provided to the layer (`StartProgress`).
 *
 * Two keys, because the two ends speak of different things: an engine or a driver reports a
 * `StartStep` (what it does, in its words) to `StartSteps`, and the runtime builder, which knows
 * when the start began and which status a step belongs to, stamps it into a `StartProgressEvent`
 * for the user's `StartProgress`. Both default to doing nothing: a warm pool's starts, which no one
 * waits for, and code run outside a runtime's start (the runtime API's builds) report to no one.
 */
import { Context, type Duration, Effect, Layer } from "effect"
import type { RuntimeStatus } from "../schema/RuntimeStatus.ts"

/**
 * What a start does, in the order a start does it (a start skips what it need not do: an image
 * that exists is not pulled or built).
 * - `pulling-image`: the base image is not on the engine; `bytes` counts what came so far.
 * - `building-image`: the runtime image is built; `step` is the build's step i of n.
 * - `creating`: the provider makes the sandbox (a container, a pod, a cloud sandbox).
 * - `starting-server`: the action server is started in it.
 * - `waiting-for-server`: the server runs; the runtime waits for it to answer (`/alive`).
 * - `ready`: the runtime is ready (its status READY); the last event.
 */
export type StartPhase =
  | "pulling-image"
  | "building-image"
  | "creating"
  | "starting-server"
  | "waiting-for-server"
  | "ready"

/** One step of a start as an engine or a driver reports it. */
export interface StartStep {
  readonly phase: StartPhase
  /** What it does, one line: `RUN apt-get install ...`, `container effect-sandbox-<id>`. */
  readonly detail: string
  /** Where the phase counts steps (an image build): step `index` (from 1) of `total`. */
  readonly step?: { readonly index: number; readonly total: number }
  /** Where the phase moves data (a pull): bytes `done` of `total` so far (both grow as layers are seen). */
  readonly bytes?: { readonly done: number; readonly total: number }
}

/** A step stamped by the runtime builder: the status it belongs to, and the time since the start began. */
export interface StartProgressEvent extends StartStep {
  readonly status: RuntimeStatus
  readonly elapsed: Duration.Duration
}

/** The OpenHands status a phase belongs to. */
export const statusOfPhase = (phase: StartPhase): RuntimeStatus => {
  switch (phase) {
    case "pulling-image":
    case "building-image":
      return "BUILDING_RUNTIME"
    case "creating":
    case "starting-server":
      return "STARTING_RUNTIME"
    case "waiting-for-server":
      return "RUNTIME_STARTED"
    case "ready":
      return "READY"
  }
}

/**
 * The user's listener of a runtime's start: provide it to the runtime's layer
 * (`DockerRuntime.layer().pipe(Layer.provide(StartProgress.layer(render)))`) and it is called with
 * each event, in order, while the layer is built. A slow listener slows the start: render, don't wait.
 */
export class StartProgress extends Context.Reference<{
  readonly report: (event: StartProgressEvent) => Effect.Effect<void>
}>("effect-sandbox/StartProgress", { defaultValue: () => ({ report: () => Effect.void }) }) {
  /** A layer calling `report` with each event of the starts built under it. */
  static readonly layer = (report: (event: StartProgressEvent) => Effect.Effect<void>) =>
    Layer.succeed(StartProgress, { report })
}

/** Where engines and drivers report their steps: set by the runtime builder while a start runs. */
export class StartSteps extends Context.Reference<{
  readonly report: (step: StartStep) => Effect.Effect<void>
}>("effect-sandbox/StartSteps", { defaultValue: () => ({ report: () => Effect.void }) }) {}

/** Report a step of the start in progress (to no one outside a runtime's start). */
export const reportStart = (step: StartStep): Effect.Effect<void> =>
  Effect.gen(function*() {
    const steps = yield* StartSteps
    yield* steps.report(step)
  })
