/**
 * Idle sandboxes: paused after `idlePauseAfter`, stopped (removed) after `idleStopAfter`.
 *
 * What counts as activity is what this server can observe: a request proxied to the sandbox, a
 * `/start` or `/resume` naming it, and, for a running sandbox, the last action its server reports
 * (`/server_info`'s `idle_time`: actions sent to it directly, without the proxy, count too). A
 * running sandbox whose server does not answer (still starting) is never idle. The
 * times seen here are kept in memory only: after a restart of the API server every sandbox's
 * clock starts again at the restart (a grace period, never an early stop).
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { type Sandbox, Sandboxes } from "./sandboxes.ts"

export class Activity extends Context.Service<Activity, {
  /** Note activity of the runtime now. */
  readonly touch: (runtimeId: string) => void
  /** When the runtime was last seen active by this process (its start time when never). */
  readonly lastSeen: (runtimeId: string) => number
}>()("effect-sandbox/runtimeApi/Activity") {
  static readonly layer: Layer.Layer<Activity> = Layer.sync(Activity, () => {
    const startedAt = Date.now()
    const seen = new Map<string, number>()
    return Activity.of({
      touch: (runtimeId) => void seen.set(runtimeId, Date.now()),
      lastSeen: (runtimeId) => seen.get(runtimeId) ?? startedAt
    })
  })
}

export interface IdleLimits {
  readonly pauseAfter?: Duration.Duration | undefined
  readonly stopAfter?: Duration.Duration | undefined
}

/**
 * When a running sandbox's server last ran an action, by its own clock (`/server_info`); undefined
 * when it does not answer (still starting, or wedged: not observably idle).
 */
const serverLastAction = (serverUrl: string) =>
  Effect.promise(async () => {
    try {
      const response = await fetch(`${serverUrl}/server_info`, { signal: AbortSignal.timeout(2_000) })
      const info = await response.json() as { readonly idle_time?: unknown }
      return typeof info.idle_time === "number" ? Date.now() - info.idle_time * 1000 : undefined
    } catch {
      return undefined
    }
  })

/** When the sandbox was last active as far as this server can tell; undefined when it cannot tell. */
const lastActive = (sandbox: Sandbox, seen: number) =>
  Effect.gen(function*() {
    if (sandbox.status !== "running") return seen
    if (sandbox.serverUrl === undefined) return undefined
    const server = yield* serverLastAction(sandbox.serverUrl)
    return server === undefined ? undefined : Math.max(seen, server)
  })

/** One pass: pause or stop each sandbox idle for longer than its limit. */
const sweep = (limits: IdleLimits) =>
  Effect.gen(function*() {
    const sandboxes = yield* Sandboxes
    const activity = yield* Activity
    for (const sandbox of yield* sandboxes.list) {
      if (sandbox.status === "stopped") continue
      const last = yield* lastActive(sandbox, activity.lastSeen(sandbox.runtimeId))
      if (last === undefined) continue
      const idle = Duration.millis(Date.now() - last)
      if (limits.stopAfter !== undefined && Duration.isGreaterThanOrEqualTo(idle, limits.stopAfter)) {
        yield* Effect.logInfo(`stopping ${sandbox.runtimeId} (session ${sandbox.sessionId}): idle`)
        yield* sandboxes.stop(sandbox)
      } else if (
        sandbox.status === "running" && limits.pauseAfter !== undefined &&
        Duration.isGreaterThanOrEqualTo(idle, limits.pauseAfter)
      ) {
        yield* Effect.logInfo(`pausing ${sandbox.runtimeId} (session ${sandbox.sessionId}): idle`)
        yield* sandboxes.pause(sandbox)
      }
    }
  }).pipe(Effect.catch((error) => Effect.logWarning(`idle sweep failed: ${error.detail}`)))

/** The idle sweep, in the background while the layer lives (none without limits). */
export const idleSweeper = (limits: IdleLimits) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const limitsMs = [limits.pauseAfter, limits.stopAfter].flatMap((d) => d === undefined ? [] : [Duration.toMillis(d)])
    if (limitsMs.length === 0) return
    // A quarter of the shortest limit (at least a second): a sandbox is caught within 25 % of its limit.
    const every = Duration.millis(Math.max(1_000, Math.min(...limitsMs) / 4))
    yield* sweep(limits).pipe(Effect.repeat(Schedule.spaced(every)), Effect.forkScoped)
  }))
