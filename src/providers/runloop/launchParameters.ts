/**
 * A devbox's `launch_parameters` but the user's, checked against Runloop's rules when the layer is
 * built, so bad values fail before anything is made: the size (named, or `cpus` and `memoryMiB` as
 * Runloop's custom size), and the idle policy Runloop enforces (shut down after `idleTimeout` without
 * keep-alives or tunnel traffic), so an orphan goes without any reaper.
 *
 * `keep_alive_time_seconds` is a shutdown counted from creation (default 1 hour), which the SDK
 * documents as ignored only when the deprecated top-level `after_idle` is set, not
 * `lifecycle.after_idle`. So the policy goes in both places (Runloop accepts both when they are
 * equal), and `keep_alive_time_seconds` is Runloop's longest, 48 hours: were it honoured after
 * all, a devbox would not die an hour (or an idle timeout) after it was made while its owner
 * still uses it.
 */
import type { Runloop } from "@runloop/api-client"
import { Duration, Effect } from "effect"
import { InvalidOptionsError } from "../../schema/errors.ts"
import type { RunloopRuntimeOptions } from "./options.ts"

/** Runloop's longest `keep_alive_time_seconds`: 48 hours. */
export const LONGEST_KEEP_ALIVE_SECONDS = 172_800

const even = (n: number) => Number.isInteger(n) && n % 2 === 0

/** The size part, or the first of Runloop's rules the options break (in the order a user fixes them). */
const sizeOf = ({ cpus, diskGiB, memoryMiB, size }: RunloopRuntimeOptions): Runloop.LaunchParameters | string => {
  if (cpus === undefined && memoryMiB === undefined) {
    if (diskGiB !== undefined) return "diskGiB goes with cpus and memoryMiB (a custom size)."
    return size === undefined ? {} : { resource_size_request: size }
  }
  if (size !== undefined) return "size, or cpus and memoryMiB: not both."
  if (cpus === undefined || memoryMiB === undefined) return "cpus and memoryMiB go together (Runloop's custom size)."
  const gib = memoryMiB / 1024
  return !(cpus === 0.5 || cpus === 1 || (even(cpus) && cpus <= 16))
    ? `cpus: ${cpus}: Runloop takes 0.5, 1, or an even number up to 16.`
    : !(gib === 1 || (even(gib) && gib <= 64))
    ? `memoryMiB: ${memoryMiB}: Runloop takes 1 GiB, or an even number of GiB up to 64.`
    : gib / cpus < 2 || gib / cpus > 8
    ? `${cpus} CPU with ${gib} GiB: Runloop wants 2 to 8 GiB per CPU.`
    : diskGiB !== undefined && !(even(diskGiB) && diskGiB >= 2 && diskGiB <= 64)
    ? `diskGiB: ${diskGiB}: Runloop takes an even number from 2 to 64.`
    : {
      resource_size_request: "CUSTOM_SIZE",
      custom_cpu_cores: cpus,
      custom_gb_memory: gib,
      ...(diskGiB === undefined ? {} : { custom_disk_size: diskGiB })
    }
}

export const launchParameters = (
  options: RunloopRuntimeOptions,
  idleTimeout: Duration.Duration
): Effect.Effect<Runloop.LaunchParameters, InvalidOptionsError> => {
  const idle = Math.ceil(Duration.toSeconds(idleTimeout))
  const sized = idle < 60 || idle > LONGEST_KEEP_ALIVE_SECONDS
    ? `idleTimeout: ${idle} s: from 1 minute (the owner renews it every third of it) to 48 hours (Runloop's longest keep-alive).`
    : sizeOf(options)
  return typeof sized === "string"
    ? Effect.fail(new InvalidOptionsError({ message: `RunloopRuntime options: ${sized}` }))
    : Effect.succeed({
      ...sized,
      keep_alive_time_seconds: LONGEST_KEEP_ALIVE_SECONDS,
      after_idle: { idle_time_seconds: idle, on_idle: "shutdown" },
      lifecycle: { after_idle: { idle_time_seconds: idle, on_idle: "shutdown" } }
    })
}
