/**
 * One image build through the Engine API (`/build`, no buildx needed), followed to its end: the
 * build log goes to the Effect logger (debug) a line at a time (streamLines.ts), each step it
 * starts is reported as a start's `building-image` step i of n (services/StartProgress.ts), and a
 * failed build fails with the engine's error and the log so far. Used by the runtime image builder (imageBuilder.ts) and by the runtime API's
 * `/build` (runtimeApi/dockerImages.ts), so both read the engine's progress stream the same way.
 *
 * Interrupting a build stops it on the engine: the request is aborted (the classic builder then
 * kills its step's container) and every step container the log named is removed and waited for,
 * so a build stopped at its time limit leaves no container running behind it.
 */
import type Docker from "dockerode"
import { Data, Effect, Schedule, Stream } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { reportStart } from "../../services/StartProgress.ts"
import { statusOf } from "./classify.ts"
import { dockerClient } from "./client.ts"
import { removeContainer } from "./container.ts"
import { engineCall } from "./engine.ts"
import { progressStream } from "./progressStream.ts"
import { lineSplitter } from "./streamLines.ts"

interface BuildEvent {
  readonly stream?: string
  readonly error?: string
  readonly aux?: { readonly ID?: string }
}

/** The engine refused or failed the build: its error, and the build's log lines until then. */
export class BuildFailed extends Data.TaggedError("BuildFailed")<{
  readonly error: string
  readonly log: ReadonlyArray<string>
}> {}

/**
 * What a build step's container may use. Docker 20.10's classic builder takes memory, CPU, network
 * and ulimits, but no pids limit: `nproc` bounds steps that run as another user than root (the
 * kernel exempts host uid 0 from it), and a cgroup parent with `pids.max` set bounds every step.
 */
export interface BuildLimits {
  readonly memoryBytes: number
  readonly cpus: number
  /** `none`, or a network the operator made for builds (a step on it reaches what it reaches). */
  readonly network: string
  readonly cgroupParent?: string | undefined
}

/** Processes a non-root build user may have (the kernel counts that uid's processes host-wide). */
const BUILD_NPROC = 4096

const limitOptions = (limits: BuildLimits) => ({
  memory: limits.memoryBytes,
  // No swap beyond the memory limit.
  memswap: limits.memoryBytes,
  cpuperiod: 100_000,
  cpuquota: Math.round(limits.cpus * 100_000),
  networkmode: limits.network,
  // dockerode sends arrays as repeated keys; the engine reads ulimits as one JSON text.
  ulimits: JSON.stringify([{ Name: "nproc", Soft: BUILD_NPROC, Hard: BUILD_NPROC }]),
  ...(limits.cgroupParent === undefined ? {} : { cgroupparent: limits.cgroupParent })
})

export interface BuildRequest {
  /** The tag to build as; without one the image is left untagged (its id is returned). */
  readonly tag?: string
  /** Labels set on the image by the engine, after (and over) the Dockerfile's own. */
  readonly labels?: Readonly<Record<string, string>>
  readonly limits?: BuildLimits
}

export interface BuildResult {
  readonly imageId: string
  readonly log: ReadonlyArray<string>
}

/** The id of a step's container in the classic builder's log line ` ---> Running in 59a551d4841d`. */
const STEP_CONTAINER = /^ ---> Running in ([0-9a-f]{12,64})$/

/** The classic builder's line starting a step: `Step 3/12 : RUN apt-get update`. */
const STEP_START = /^Step (\d+)\/(\d+) : (.*)$/

/** The progress report of a line that starts a build step, else nothing. */
const reportStep = (line: string): Effect.Effect<void> => {
  const step = STEP_START.exec(line)
  return step === null ? Effect.void : reportStart({
    phase: "building-image",
    detail: step[3]!,
    step: { index: Number(step[1]), total: Number(step[2]) }
  })
}

/** Remove a build step's container and wait until the engine no longer has it. */
const removeStepContainer = Effect.fn("engineBuild.removeStepContainer")(function*(id: string) {
  const docker = yield* dockerClient
  const container = docker.getContainer(id)
  yield* removeContainer(container)
  yield* Effect.promise(() => container.inspect().then(() => false, (error) => statusOf(error) === 404)).pipe(
    Effect.repeat({ until: (gone) => gone, schedule: Schedule.spaced("100 millis"), times: 100 })
  )
})

/** Build `context` (a tar, gzip allowed); the image's id and the build's log lines. */
export const engineBuild = (context: NodeJS.ReadableStream | Buffer, request: BuildRequest = {}) =>
  Effect.gen(function*() {
    const docker: Docker = yield* dockerClient
    const abort = new AbortController()
    const log: Array<string> = []
    const steps: Array<string> = []
    let imageId: string | undefined
    const lines = lineSplitter()
    /** Keep and log each non-blank line of the build's output; note the step containers it names. */
    const record = (pieces: ReadonlyArray<string>) =>
      Effect.forEach(pieces, (piece) => {
        const line = piece.trimEnd()
        if (line.trim() === "") return Effect.void
        log.push(line)
        const step = STEP_CONTAINER.exec(line)?.[1]
        if (step !== undefined) steps.push(step)
        return Effect.andThen(reportStep(line), Effect.logDebug(`[image build] ${line}`))
      }, { discard: true })
    const follow = Effect.gen(function*() {
      const output = yield* engineCall(
        "start the image build",
        () =>
          docker.buildImage(context as NodeJS.ReadableStream, {
            ...(request.tag === undefined ? {} : { t: request.tag }),
            ...(request.labels === undefined ? {} : { labels: request.labels }),
            ...(request.limits === undefined ? {} : limitOptions(request.limits)),
            rm: true,
            forcerm: true,
            abortSignal: abort.signal
          } as Docker.ImageBuildOptions)
      )
      yield* progressStream<BuildEvent, RuntimeStartError>(
        docker,
        output,
        (error) => new RuntimeStartError({ message: `Docker: image build failed: ${error.message}` })
      ).pipe(
        Stream.runForEach((event) =>
          Effect.gen(function*() {
            if (event.aux?.ID !== undefined) imageId = event.aux.ID
            if (event.stream !== undefined) yield* record(lines.push(event.stream))
            if (event.error !== undefined) {
              yield* record(lines.end())
              return yield* new BuildFailed({ error: event.error, log })
            }
          })
        )
      )
      yield* record(lines.end())
      if (imageId === undefined) {
        return yield* new BuildFailed({ error: "the engine did not name the image it built", log })
      }
      return { imageId, log } satisfies BuildResult
    })
    return yield* follow.pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          abort.abort()
          yield* Effect.forEach(steps, removeStepContainer, { discard: true })
        })
      )
    )
  })
