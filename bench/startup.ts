/** Start-up timing shared by the runtime rows of the benchmark. */
import type { Layer } from "effect"
import { ManagedRuntime } from "effect"
import { Runtime } from "../src/index.ts"
import { timeAlternating } from "./stats.ts"

/**
 * One start of a runtime layer, timed start to READY, then released (its release is not timed),
 * after `pauseMs` (so a warm pool is refilled, as it is between real sessions): a `Timed` call for
 * `timeAlternating`, which takes it in turn with its baseline.
 */
export const timedStart = (layer: () => Layer.Layer<Runtime, unknown>, pauseMs = 0) => ({
  reported: async () => {
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
    const runtime = ManagedRuntime.make(layer())
    const started = performance.now()
    await runtime.runPromise(Runtime)
    const ready = performance.now() - started
    await runtime.dispose()
    return ready
  }
})

/** `runs` starts of a runtime layer, after one untimed start; see `timedStart`. */
export const timeStarts = async (runs: number, layer: () => Layer.Layer<Runtime, unknown>, pauseMs = 0) =>
  (await timeAlternating(runs, 1, { start: timedStart(layer, pauseMs) })).start
