/**
 * Pull an image through the Engine API, followed to its end, its progress reported as a start's
 * `pulling-image` step (services/StartProgress.ts) with the bytes downloaded so far. The runtime
 * image builder pulls a missing base image; the runtime API pulls a `/build`'s base images itself,
 * before the build, so that it can read their ONBUILD triggers first.
 */
import type Docker from "dockerode"
import { Effect, Stream } from "effect"
import type { ProviderError } from "../../schema/errors.ts"
import { reportStart } from "../../services/StartProgress.ts"
import { dockerClient } from "./client.ts"
import { engineCall, engineRefusal } from "./engine.ts"
import { progressStream } from "./progressStream.ts"

/** One event of the engine's pull progress: a layer's (`id`) state and, while downloading, its bytes. */
interface PullEvent {
  readonly id?: string
  readonly status?: string
  readonly progressDetail?: { readonly current?: number; readonly total?: number }
}

/** A progress report at most every this many bytes (a layer's completion is always reported). */
const REPORT_EVERY_BYTES = 1_000_000

/**
 * The bytes of a pull so far, summed over its layers as the engine reports them: a layer counts
 * once its download reports its size (one the engine has, or too small to report, counts nothing).
 */
const pullBytes = () => {
  const layers = new Map<string, { done: number; total: number }>()
  const get = () =>
    [...layers.values()].reduce(
      (sum, layer) => ({ done: sum.done + layer.done, total: sum.total + layer.total }),
      { done: 0, total: 0 }
    )
  const downloaded = () => get().done
  return {
    /** Take in one event; whether it is worth reporting (a layer done, or a megabyte more). */
    add: (event: PullEvent): boolean => {
      if (event.id === undefined) return false
      const before = downloaded()
      const total = layers.get(event.id)?.total ?? 0
      const progress = event.progressDetail ?? {}
      if (event.status === "Downloading" && progress.total !== undefined && progress.total > 0) {
        layers.set(event.id, { done: progress.current ?? 0, total: progress.total })
      } else if (event.status === "Download complete" || event.status === "Pull complete") {
        layers.set(event.id, { done: total, total })
        return true
      }
      return Math.floor(downloaded() / REPORT_EVERY_BYTES) !== Math.floor(before / REPORT_EVERY_BYTES)
    },
    get
  }
}

export const pullImage = Effect.fn("DockerEngine.pullImage")(function*(image: string) {
  const docker: Docker = yield* dockerClient
  const bytes = pullBytes()
  yield* reportStart({ phase: "pulling-image", detail: image, bytes: bytes.get() })
  const output = yield* engineCall(`pull ${image}`, () => docker.pull(image))
  yield* progressStream<PullEvent, ProviderError>(docker, output, (error) => engineRefusal(`pull ${image}`, error))
    .pipe(
      Stream.runForEach((event) =>
        bytes.add(event) ? reportStart({ phase: "pulling-image", detail: image, bytes: bytes.get() }) : Effect.void
      )
    )
})
