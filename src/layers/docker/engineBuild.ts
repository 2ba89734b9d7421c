/**
 * One image build through the Engine API (`/build`, no buildx needed), followed to its end: the
 * build log goes to the Effect logger (debug), and a failed build fails with the engine's error
 * and the log so far. Used by the runtime image builder (imageBuilder.ts) and by the runtime API's
 * `/build` (runtimeApi/dockerImages.ts), so both read the engine's progress stream the same way.
 */
import type Docker from "dockerode"
import { Cause, Data, Effect, Queue, Stream } from "effect"
import { RuntimeStartError } from "../../schema/errors.ts"
import { dockerClient } from "./client.ts"
import { engineCall } from "./engine.ts"

interface BuildEvent {
  readonly stream?: string
  readonly error?: string
}

/** The engine refused or failed the build: its error, and the build's log lines until then. */
export class BuildFailed extends Data.TaggedError("BuildFailed")<{
  readonly error: string
  readonly log: ReadonlyArray<string>
}> {}

/** Build `context` (a tar, gzip allowed) as `tag`; the build's log lines. */
export const engineBuild = (context: NodeJS.ReadableStream | Buffer, tag: string) =>
  Effect.gen(function*() {
    const docker: Docker = yield* dockerClient
    const output = yield* engineCall(
      "start the image build",
      () => docker.buildImage(context as NodeJS.ReadableStream, { t: tag, rm: true, forcerm: true })
    )
    const log: Array<string> = []
    yield* Stream.callback<BuildEvent, RuntimeStartError>((queue) =>
      Effect.sync(() =>
        docker.modem.followProgress(
          output,
          (error) =>
            error
              ? Queue.failCauseUnsafe(
                queue,
                Cause.fail(new RuntimeStartError({ message: `Docker: image build failed: ${error.message}` }))
              )
              : Queue.endUnsafe(queue),
          (event: BuildEvent) => Queue.offerUnsafe(queue, event)
        )
      )
    ).pipe(
      Stream.runForEach((event) =>
        Effect.gen(function*() {
          if (event.stream !== undefined && event.stream.trim() !== "") {
            log.push(event.stream.trimEnd())
            yield* Effect.logDebug(`[image build] ${event.stream.trimEnd()}`)
          }
          if (event.error !== undefined) return yield* new BuildFailed({ error: event.error, log })
        })
      )
    )
    return log
  })
