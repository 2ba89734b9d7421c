/**
 * DockerRuntime's hosted lifecycle target: containers on the local engine, found by their session
 * label; a second layer with the session id attaches to a kept container; `docker pause` keeps
 * memory; the reaper judges owners by their lease, so the reaper case runs on short lease terms.
 */
import { DockerRuntime } from "../../../src/docker.ts"
import { SandboxConfig } from "../../../src/index.ts"
import { containersWithLabel } from "../../docker/infra.ts"
import type { HostedLifecycleTarget, LifecycleOptions } from "../hostedTarget.ts"
import { DYING_SERVER_ENV, DYING_SERVER_OUTPUT } from "./shared.ts"

/** Where the owner process finds the engine's image: the base image's tag. */
export interface DockerArgs {
  readonly baseImage: string
}

export const lifecycleLayer = (args: DockerArgs, options: LifecycleOptions) =>
  DockerRuntime.layer({
    baseImage: args.baseImage,
    sessionId: options.sessionId,
    sandbox: new SandboxConfig({ keepRuntimeAlive: options.keepRuntimeAlive ?? false }),
    ...(options.reapEvery === undefined
      ? {}
      : { reapEvery: options.reapEvery, ownerLease: { renewEvery: "1 second", staleAfter: "5 seconds" } })
  })

export const dockerLifecycle = (args: () => DockerArgs): HostedLifecycleTarget => ({
  name: "DockerRuntime",
  layer: (options) => lifecycleLayer(args(), options),
  sandboxes: async (sessionId) => containersWithLabel(`effect-sandbox.session=${sessionId}`),
  pause: { memorySurvives: true },
  attach: { layer: (sessionId) => DockerRuntime.attach(sessionId, { baseImage: args().baseImage }) },
  reaper: { owner: () => ({ module: import.meta.filename, args: args() }) },
  dyingServer: {
    layer: (sessionId) => DockerRuntime.layer({ baseImage: args().baseImage, sessionId, env: DYING_SERVER_ENV }),
    exitCode: 1,
    output: DYING_SERVER_OUTPUT
  }
})
