/**
 * The options vocabulary every hosted runtime shares (the cloud runtimes, and any driver built on
 * src/hosted/): one name per concept, whichever provider runs the sandbox, so a program swaps
 * `E2BRuntime.layer` for `ModalRuntime.layer` without renaming its options. A provider that cannot
 * honour one of them refuses it with an `InvalidOptionsError` at start, never silently.
 * test/hosted/optionsVocabulary.test.ts keeps the runtime modules aligned on it.
 */
import { Config, Duration, Effect, Option, type Redacted, Schedule } from "effect"
import type { RuntimeSchedules } from "../client/policies.ts"
import { checkRuntimeOptions, refuseHostWorkspace } from "../runtime/options.ts"
import { InvalidOptionsError } from "../schema/errors.ts"
import type { Snapshot } from "../schema/snapshot.ts"
import type { WhilePaused } from "../services/Runtime.ts"
import type { RuntimeOptions } from "../services/RuntimeOptions.ts"

/**
 * The shared options (services/RuntimeOptions.ts) less `workspace`: a directory on this machine
 * cannot be mounted in a provider's sandbox, which has its own /workspace (filled with `copyTo`).
 */
export interface HostedOptions extends Omit<RuntimeOptions, "workspace" | "keepWorkspace"> {
  /** The sandbox user the server and commands run as, and its uid (default: the provider's image's). */
  readonly user?: string
  readonly userId?: number
  /** CPU cores and memory asked of the provider (default: the provider's, or its template's). */
  readonly cpus?: number
  readonly memoryMiB?: number
  /** The sandbox's whole life, however busy (default: the provider's). */
  readonly lifetime?: Duration.Input
  /**
   * How long the provider keeps a sandbox its owner no longer keeps alive: the owner renews it (or
   * counts as activity) every third of this while it lives, so only an orphan runs out (default:
   * the driver's). A sandbox kept alive on release is not renewed.
   */
  readonly idleTimeout?: Duration.Input
  /** Extra ports reported in `info.urls` as `app-<port>`, reached the way the server's port is. */
  readonly appPorts?: ReadonlyArray<number>
  /** How long the first `/alive` wait may take (default: the driver's, 60 s unless it says more). */
  readonly aliveTimeout?: Duration.Input
  /** How often the reaper looks for sandboxes of dead owners on this host (default 60 s). */
  readonly reapEvery?: Duration.Input
  /**
   * Retries of provider calls the provider asked us to wait out: rate limits (with `Retry-After`),
   * unavailability (5xx), a state change in progress (default `PROVIDER_RETRY`).
   */
  readonly providerRetry?: Schedule.Schedule<unknown>
  readonly schedules?: RuntimeSchedules
  readonly whilePaused?: WhilePaused
  /**
   * Start from this snapshot (`Runtime.snapshot`'s handle, or its id) instead of the image: its
   * files, and its memory where the provider keeps it (docs/snapshots.md).
   */
  readonly fromSnapshot?: Snapshot | string
}

/** A pool's options: how many sandboxes to keep ready. */
export interface PoolOptions {
  readonly poolSize: number
}

/** Exponential from 1 s, jittered, at most 5 retries (about half a minute in all), then the provider's text. */
export const PROVIDER_RETRY: Schedule.Schedule<unknown> = Schedule.exponential("1 second").pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 5 })
)

const invalid = (runtime: string, message: string) =>
  Effect.fail(new InvalidOptionsError({ message: `${runtime} options: ${message}` }))

const duration = (runtime: string, name: string, input: Duration.Input | undefined) =>
  input === undefined ? Effect.succeed(undefined) : Option.match(Duration.fromInput(input), {
    onNone: () => invalid(runtime, `${name} is not a duration.`),
    onSome: (value) =>
      Duration.isGreaterThan(value, Duration.zero)
        ? Effect.succeed(value)
        : invalid(runtime, `${name} must be positive.`)
  })

const positive = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0)

/** An option this provider cannot honour, refused rather than ignored. */
export const unsupported = (runtime: string, options: object, names: ReadonlyArray<string>, why: string) => {
  const given = names.filter((name) => (options as Record<string, unknown>)[name] !== undefined)
  return given.length === 0 ? Effect.void : invalid(runtime, `${given.join(", ")}: ${why}.`)
}

/**
 * A Duration option for a provider that counts it in whole units (Daytona's minutes): its number of
 * them as `measure` counts, within `bounds`; else an InvalidOptionsError saying it must be `what`.
 */
export const wholeDuration = (
  runtime: string,
  name: string,
  input: Duration.Input,
  measure: (duration: Duration.Duration) => number,
  bounds: readonly [number, number],
  what: string
): Effect.Effect<number, InvalidOptionsError> => {
  const value = Option.map(Duration.fromInput(input), measure)
  return Option.isSome(value) && Number.isInteger(value.value) && value.value >= bounds[0] && value.value <= bounds[1]
    ? Effect.succeed(value.value)
    : invalid(runtime, `${name} must be ${what}.`)
}

/** The shared options checked, before anything is made: each bad value one line naming it. */
export const checkHostedOptions = Effect.fn("checkHostedOptions")(function*(
  runtime: string,
  sandboxName: string,
  options: HostedOptions,
  hostWorkspace: boolean
) {
  yield* checkRuntimeOptions(`${runtime} options`, options)
  if (!hostWorkspace) yield* refuseHostWorkspace(runtime, sandboxName, options)
  if (!positive(options.cpus) || !positive(options.memoryMiB)) {
    return yield* invalid(runtime, "cpus and memoryMiB must be positive.")
  }
  if (options.userId !== undefined && !(Number.isInteger(options.userId) && options.userId >= 0)) {
    return yield* invalid(runtime, "userId must be a whole number, 0 or more.")
  }
  const bad = (options.appPorts ?? []).find((port) => !(Number.isInteger(port) && port > 0 && port < 65536))
  if (bad !== undefined) return yield* invalid(runtime, `appPorts: ${bad} is not a port.`)
  yield* duration(runtime, "lifetime", options.lifetime)
  yield* duration(runtime, "idleTimeout", options.idleTimeout)
  yield* duration(runtime, "aliveTimeout", options.aliveTimeout)
  yield* duration(runtime, "reapEvery", options.reapEvery)
})

/**
 * A secret option, else its environment variable through Effect Config; neither is an
 * `InvalidOptionsError` naming both (and what the secret is), on every provider alike.
 */
export const credential = (
  runtime: string,
  given: Redacted.Redacted<string> | undefined,
  option: string,
  variable: string,
  what: string
) =>
  given !== undefined ? Effect.succeed(given) : Config.option(Config.Redacted(variable)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => invalid(runtime, `no ${option} given and ${variable} is not set (${what}).`),
      onSome: Effect.succeed
    }))
  )
