/**
 * The chaos suite's result rows (`bench/reliability.json`) and the time budget
 * each group works within. A row is a measured value beside its target; a group
 * that ran out of its share says so in the row rather than running on.
 */

/** One line of `bench/reliability.json`. */
export interface Row {
  readonly name: string
  readonly value: number
  readonly unit: string
  /** Human-readable target, e.g. `0`, `<= 60`, `>= 10000`. */
  readonly target: string
  readonly pass: boolean
}

/** A value that must not exceed `max` (0 for counts of things that must never happen). */
export const atMost = (name: string, value: number, unit: string, max: number): Row => ({
  name,
  value: round(value),
  unit,
  target: max === 0 ? "0" : `<= ${max}`,
  pass: value <= max
})

/** A value that must reach `min`. */
export const atLeast = (name: string, value: number, unit: string, min: number): Row => ({
  name,
  value: round(value),
  unit,
  target: `>= ${min}`,
  pass: value >= min
})

/** A figure reported for the record (throughput), with no target. */
export const report = (name: string, value: number, unit: string): Row => ({
  name,
  value: round(value),
  unit,
  target: "report",
  pass: true
})

/** A check that could not run at all (its infrastructure failed): always a failing row. */
export const broken = (name: string, error: unknown): Row => {
  console.error(`  ${name}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  return { name, value: Number.NaN, unit: "error", target: "runs", pass: false }
}

const round = (n: number) => Number.isInteger(n) ? n : Math.round(n * 1000) / 1000

/** Wall-clock time a group may use; loops ask `left()` before each round. */
export class Budget {
  readonly ms: number
  private readonly end: number
  constructor(ms: number) {
    this.ms = ms
    this.end = performance.now() + ms
  }
  left(): number {
    return Math.max(0, this.end - performance.now())
  }
  get over(): boolean {
    return this.left() === 0
  }
}

/** The settings every group receives. */
export interface GroupContext {
  readonly budget: Budget
  /** `--quick`: small counts for development (a few seconds per group). */
  readonly quick: boolean
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Poll `check` every `everyMs` until it holds or `ms` pass; returns the time it took, or null. */
export const waitFor = async (check: () => boolean | Promise<boolean>, ms: number, everyMs = 100) => {
  const start = performance.now()
  while (performance.now() - start < ms) {
    if (await check()) return performance.now() - start
    await sleep(everyMs)
  }
  return (await check()) ? performance.now() - start : null
}

/** Reject after `ms` (the promise itself keeps running: the caller must stop what it started). */
export const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
    promise.then((a) => {
      clearTimeout(timer)
      resolve(a)
    }, (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })
