/**
 * A devbox's `launch_parameters` from the options, checked against Runloop's rules when the layer is
 * built, so bad values fail before anything is made: the size (named, or the shared `cpus` and
 * `memoryMiB` as Runloop's custom size), and the idle policy Runloop enforces on its side
 * (`lifecycle.after_idle`: shut down after `idleTimeout` without activity; the owner's keep-alives
 * and the tunnel's traffic are activity), so an orphan goes without any reaper.
 */
import type { Runloop } from "@runloop/api-client"
import { Duration, Effect } from "effect"
import { InvalidOptionsError } from "../../schema/errors.ts"
import type { RunloopRuntimeOptions } from "./options.ts"

type LaunchParameters = NonNullable<Runloop.DevboxCreateParams["launch_parameters"]>

const invalid = (message: string) =>
  Effect.fail(new InvalidOptionsError({ message: `RunloopRuntime options: ${message}` }))

const even = (n: number) => Number.isInteger(n) && n % 2 === 0

/** What breaks Runloop's rules for a custom size, if anything. */
const customSizeRefusal = (cpus: number, memoryMiB: number, diskGiB: number | undefined) => {
  const gib = memoryMiB / 1024
  if (!(cpus === 0.5 || cpus === 1 || (even(cpus) && cpus <= 16))) {
    return `cpus: ${cpus}: Runloop takes 0.5, 1, or an even number up to 16.`
  }
  if (!(gib === 1 || (even(gib) && gib <= 64))) {
    return `memoryMiB: ${memoryMiB}: Runloop takes 1 GiB, or an even number of GiB up to 64.`
  }
  if (gib / cpus < 2 || gib / cpus > 8) return `${cpus} CPU with ${gib} GiB: Runloop wants 2 to 8 GiB per CPU.`
  if (diskGiB !== undefined && !(even(diskGiB) && diskGiB >= 2 && diskGiB <= 64)) {
    return `diskGiB: ${diskGiB}: Runloop takes an even number from 2 to 64.`
  }
  return undefined
}

/** The size part: a named size, or a custom one within Runloop's rules. */
const sizeParameters = (
  { cpus, diskGiB, memoryMiB, size }: RunloopRuntimeOptions
): Effect.Effect<LaunchParameters, InvalidOptionsError> => {
  if (cpus === undefined && memoryMiB === undefined) {
    if (diskGiB !== undefined) return invalid("diskGiB goes with cpus and memoryMiB (a custom size).")
    return Effect.succeed(size === undefined ? {} : { resource_size_request: size })
  }
  if (size !== undefined) return invalid("size, or cpus and memoryMiB: not both.")
  if (cpus === undefined || memoryMiB === undefined) {
    return invalid("cpus and memoryMiB go together (Runloop's custom size).")
  }
  const refusal = customSizeRefusal(cpus, memoryMiB, diskGiB)
  return refusal !== undefined ? invalid(refusal) : Effect.succeed({
    resource_size_request: "CUSTOM_SIZE" as const,
    custom_cpu_cores: cpus,
    custom_gb_memory: memoryMiB / 1024,
    ...(diskGiB === undefined ? {} : { custom_disk_size: diskGiB })
  })
}

/**
 * The launch parameters but the user's. The idle timeout is also `keep_alive_time_seconds`: Runloop
 * ignores that when an idle policy is set, but an account or API version without the policy still
 * removes the devbox that long after its last keep-alive.
 */
export const launchParameters = (
  options: RunloopRuntimeOptions,
  idleTimeout: Duration.Duration
): Effect.Effect<LaunchParameters, InvalidOptionsError> => {
  const idle = Math.ceil(Duration.toSeconds(idleTimeout))
  return idle < 60 || idle > 172_800
    ? invalid(
      `idleTimeout: ${idle} s: from 1 minute (the owner renews it every third of it) to 48 hours (Runloop's longest keep-alive).`
    )
    : Effect.map(sizeParameters(options), (size) => ({
      ...size,
      keep_alive_time_seconds: idle,
      lifecycle: { after_idle: { idle_time_seconds: idle, on_idle: "shutdown" as const } }
    }))
}
