/**
 * A devbox's `launch_parameters` from RunloopRuntime's options: its size (one of Runloop's named
 * sizes, or custom CPU, memory and disk, checked against Runloop's rules here so bad values fail
 * before anything is created), the sandbox user, and the lifetime terms Runloop enforces on its
 * side, so a devbox whose owner died goes away without any reaper: `keep_alive_time_seconds`
 * and an idle policy (`lifecycle.after_idle`: shut down after that long without activity; the
 * owner's `keep_alive` calls and the tunnel's traffic are activity).
 */
import type { Runloop } from "@runloop/api-client"
import { Duration, Effect } from "effect"
import { InvalidOptionsError } from "../../schema/errors.ts"

/** Runloop's named sizes (docs: X_SMALL 0.5 CPU / 1 GiB ... XX_LARGE 8 CPU / 32 GiB). */
export type RunloopSize = "X_SMALL" | "SMALL" | "MEDIUM" | "LARGE" | "X_LARGE" | "XX_LARGE"

/** A named size, or custom resources (CPU 0.5, 1 or even up to 16; memory 1 or even up to 64 GiB; disk even, 2 to 64 GiB). */
export type RunloopResources =
  | { readonly size: RunloopSize }
  | { readonly cpu: number; readonly memoryGiB: number; readonly diskGiB?: number }

/** The terms the launch parameters are made from. */
export interface LaunchTerms {
  readonly resources?: RunloopResources | undefined
  readonly idleTimeout: Duration.Duration
  readonly username: string
  readonly userId: number
}

const invalid = (message: string) =>
  Effect.fail(new InvalidOptionsError({ message: `Invalid RunloopRuntime options: ${message}` }))

const even = (n: number) => Number.isInteger(n) && n % 2 === 0

/** Runloop's rules for custom sizes, as its API states them. */
const checkCustom = (r: { readonly cpu: number; readonly memoryGiB: number; readonly diskGiB?: number }) => {
  if (!(r.cpu === 0.5 || r.cpu === 1 || (even(r.cpu) && r.cpu <= 16))) {
    return invalid(`resources.cpu: ${r.cpu}: Runloop takes 0.5, 1, or an even number up to 16.`)
  }
  if (!(r.memoryGiB === 1 || (even(r.memoryGiB) && r.memoryGiB <= 64))) {
    return invalid(`resources.memoryGiB: ${r.memoryGiB}: Runloop takes 1, or an even number up to 64.`)
  }
  const ratio = r.memoryGiB / r.cpu
  if (ratio < 2 || ratio > 8) {
    return invalid(`resources: ${r.cpu} CPU with ${r.memoryGiB} GiB: Runloop wants 2 to 8 GiB per CPU.`)
  }
  if (r.diskGiB !== undefined && !(even(r.diskGiB) && r.diskGiB >= 2 && r.diskGiB <= 64)) {
    return invalid(`resources.diskGiB: ${r.diskGiB}: Runloop takes an even number from 2 to 64.`)
  }
  return Effect.void
}

/** The size part of the launch parameters. */
const sizeParameters = (resources: RunloopResources | undefined) =>
  Effect.gen(function*() {
    if (resources === undefined) return {}
    if ("size" in resources) return { resource_size_request: resources.size }
    yield* checkCustom(resources)
    return {
      resource_size_request: "CUSTOM_SIZE" as const,
      custom_cpu_cores: resources.cpu,
      custom_gb_memory: resources.memoryGiB,
      ...(resources.diskGiB === undefined ? {} : { custom_disk_size: resources.diskGiB })
    }
  })

/**
 * The launch parameters. The idle timeout is both the idle policy and `keep_alive_time_seconds`:
 * Runloop ignores the latter when an idle policy is set, but an account or API version that does
 * not know the policy still removes the devbox that long after its last keep-alive.
 */
export const launchParameters = (terms: LaunchTerms) =>
  Effect.gen(function*() {
    const idleSeconds = Math.ceil(Duration.toSeconds(terms.idleTimeout))
    if (idleSeconds < 60 || idleSeconds > 172_800) {
      return yield* invalid(
        `idleTimeout: ${idleSeconds} s: from 1 minute (the owner renews it every third of it) ` +
          "to 48 hours (Runloop's longest keep-alive)."
      )
    }
    return {
      ...(yield* sizeParameters(terms.resources)),
      keep_alive_time_seconds: idleSeconds,
      lifecycle: { after_idle: { idle_time_seconds: idleSeconds, on_idle: "shutdown" } },
      user_parameters: { username: terms.username, uid: terms.userId }
    } satisfies Runloop.DevboxCreateParams["launch_parameters"]
  })
