/** Timing and memory helpers for the benchmarks. */

/**
 * `npm run bench -- --quick`: every row's code path once, with a few iterations, for CI to catch
 * a broken row (its figures mean nothing and are not saved). Read here so that every row's
 * `timeRuns` shrinks without each group knowing.
 */
export const QUICK = process.argv.includes("--quick")

export interface Sample {
  readonly p50: number
  readonly p95: number
}

/** One figure as a sample (a total, a rate): its p50 and p95 are the figure. */
export const single = (ms: number): Sample => ({ p50: ms, p95: ms })

export const percentiles = (durations: ReadonlyArray<number>): Sample => {
  const sorted = [...durations].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return { p50: at(0.5), p95: at(0.95) }
}

/**
 * One call a round of `timeAlternating` times: a call whose wall time is the figure, or one that
 * reports its own duration (`reported`, e.g. start to READY, leaving out the release after it).
 */
export type Timed = (() => Promise<unknown>) | { readonly reported: () => Promise<number> }

/**
 * Time `runs` rounds (after `warmup` untimed ones), each calling every entry of `calls` once, in
 * turn; in milliseconds, by entry. For starts, which take hundreds of milliseconds: timed in turn,
 * a start and its baseline share whatever the machine is doing (the engine's state, the page
 * cache, a neighbour's load) where two blocks of ten would each get their own. Not for round trips
 * of a fraction of a millisecond: there the call before leaves its mark on the next one (an HTTP
 * round trip's four processes evict the in-process call's caches and move it across cores: 0.21 ms
 * where it takes 0.14 alone), so those are timed in blocks after a warm-up long enough for both.
 */
export const timeAlternating = async <K extends string>(
  runs: number,
  warmup: number,
  calls: Readonly<Record<K, Timed>>
): Promise<Record<K, Sample>> => {
  // A quick run checks each row's path (CI's budget for it is 90 s): no warm-up, one call.
  if (QUICK) {
    runs = 1
    warmup = 0
  }
  const entries = Object.entries(calls) as Array<[K, Timed]>
  const timeOne = async (call: Timed): Promise<number> => {
    if (typeof call !== "function") return call.reported()
    const start = performance.now()
    await call()
    return performance.now() - start
  }
  for (let i = 0; i < warmup; i++) for (const [, call] of entries) await timeOne(call)
  const durations = new Map<K, Array<number>>(entries.map(([key]) => [key, []]))
  for (let i = 0; i < runs; i++) for (const [key, call] of entries) durations.get(key)!.push(await timeOne(call))
  return Object.fromEntries(entries.map(([key]) => [key, percentiles(durations.get(key)!)])) as Record<K, Sample>
}

/**
 * Time `runs` sequential calls (after `warmup` untimed ones), in milliseconds. By default a call's
 * wall time; `measure` can instead take a duration the call reports itself (e.g. start to READY).
 */
export const timeRuns = async <A>(
  runs: number,
  warmup: number,
  f: () => Promise<A>,
  measure?: (result: A) => number
): Promise<Sample> => {
  const call: Timed = measure === undefined ? f : { reported: async () => measure(await f()) }
  return (await timeAlternating(runs, warmup, { call })).call
}

/** Run `f` while sampling RSS every 5 ms; returns its wall time and the peak RSS growth, in MB. */
export const measureMemory = async (f: () => Promise<unknown>): Promise<{ wallMs: number; rssGrowthMb: number }> => {
  globalThis.gc?.()
  const before = process.memoryUsage().rss
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 5)
  const start = performance.now()
  try {
    await f()
  } finally {
    clearInterval(timer)
  }
  peak = Math.max(peak, process.memoryUsage().rss)
  return { wallMs: performance.now() - start, rssGrowthMb: (peak - before) / 2 ** 20 }
}

/**
 * A group that cannot run here (no engine, no Chromium, no kernel) says so and is left out; in CI
 * (CI=true) it fails the run instead, as a test lacking its infrastructure does.
 */
export const skipped = (reason: string): void => {
  if (process.env["CI"] === "true") throw new Error(`bench group cannot run in CI: ${reason}`)
  console.log(`(${reason})`)
}
