/** Start-up timing shared by the runtime rows of the benchmark. */
import type { Layer } from "effect"
import { ManagedRuntime } from "effect"
import { Runtime } from "../src/index.ts"
import { timeRuns } from "./stats.ts"

/**
 * Time to build a runtime layer (start to READY), `runs` times; each is released before the
 * next, after `pauseMs` (so a warm pool is refilled, as it is between real sessions).
 */
export const timeStarts = (runs: number, layer: () => Layer.Layer<Runtime, unknown>, pauseMs = 0) =>
  timeRuns(runs, 1, async () => {
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
    const runtime = ManagedRuntime.make(layer())
    const started = performance.now()
    await runtime.runPromise(Runtime)
    const ready = performance.now() - started
    await runtime.dispose()
    return ready
  }, (result) => result as number)
