/**
 * The limits of the runtime API's Docker sandboxes, checked by DockerRuntime's rules
 * (`checkDockerOptions`) before anything starts: the server's own (`--cpus`, `--memory-mb`,
 * `--container-name-prefix`) when it starts, and what a request's `resource_factor` makes of them
 * (a factor of 0.001 asked for 0.002 CPUs, which the engine refused with its own 400 half-way
 * through a start) before an image is built or a container made.
 */
import type { Effect } from "effect"
import { checkDockerOptions } from "../providers/docker/options.ts"
import type { InvalidOptionsError } from "../schema/errors.ts"

const MIB = 1024 * 1024

export interface ContainerLimits {
  readonly cpus?: number | undefined
  readonly memoryBytes?: number | undefined
  readonly containerNamePrefix?: string | undefined
}

/** `limits` checked as DockerRuntime's options (memory in whole MiB, as DockerRuntime takes it). */
export const checkContainerLimits = (
  limits: ContainerLimits,
  subject: string
): Effect.Effect<void, InvalidOptionsError> =>
  checkDockerOptions({
    ...(limits.cpus === undefined ? {} : { cpus: limits.cpus }),
    ...(limits.memoryBytes === undefined ? {} : { memoryMiB: Math.floor(limits.memoryBytes / MIB) }),
    ...(limits.containerNamePrefix === undefined ? {} : { containerNamePrefix: limits.containerNamePrefix })
  }, subject)
