/**
 * DockerRuntime's side of the `network` option: the policy checked against the sandbox's settings
 * that would open another way out, and a sandbox's create options put behind its gateway
 * (engines/docker/egress.ts), whose published ports are the ones the host reaches it by.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { behindEgress, makeEgress } from "../../engines/docker/egress.ts"
import { bindSecrets, type ParsedSecret } from "../../network/edgeSecrets.ts"
import type { EgressPolicy } from "../../network/policy.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { SandboxConfig } from "../../schema/SandboxConfig.ts"

/** The sandbox setting that would give a restricted sandbox a route out, if any. */
const opening = (sandbox: SandboxConfig): string | undefined => {
  const raw = (sandbox.dockerRuntimeKwargs ?? {}) as Docker.ContainerCreateOptions
  if (sandbox.useHostNetwork) return "sandbox.useHostNetwork (the host's network)"
  if (sandbox.additionalNetworks.length > 0) return "sandbox.additionalNetworks (networks with a route out)"
  if (raw.NetworkingConfig !== undefined || raw.HostConfig?.NetworkMode !== undefined) {
    return "dockerRuntimeKwargs' network settings"
  }
  if (raw.HostConfig?.Dns !== undefined || raw.HostConfig?.ExtraHosts !== undefined) {
    return "dockerRuntimeKwargs' resolver settings"
  }
  return undefined
}

/**
 * The create options of a sandbox with a network policy, its network and gateway made first; the
 * options unchanged without one. A sandbox setting that would bypass the policy fails the start.
 * Bound secrets get placeholders of this sandbox's own: the values go to the gateway, the
 * placeholders into the sandbox's environment.
 */
export const restrictEgress = Effect.fn("DockerRuntime.restrictEgress")(function*(
  policy: EgressPolicy | undefined,
  options: Docker.ContainerCreateOptions,
  sandbox: SandboxConfig,
  userId: number,
  secrets: ReadonlyArray<ParsedSecret>
) {
  if (policy === undefined) return options
  const open = opening(sandbox)
  if (open !== undefined) {
    return yield* new RuntimeStartError({
      message: `DockerRuntime: the network option cannot be enforced with ${open}: leave one of the two unset.`
    })
  }
  const { bound, env } = bindSecrets(secrets)
  const egress = yield* makeEgress({
    name: options.name!,
    image: options.Image!,
    policy,
    ports: Object.keys(options.ExposedPorts ?? {}).map((key) => Number.parseInt(key, 10)),
    userId,
    secrets: bound,
    placeholders: env
  })
  return behindEgress(options, egress)
})
