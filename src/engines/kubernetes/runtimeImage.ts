/**
 * The image a session's pod runs: the one named (`image`, else `sandbox.runtimeContainerImage`),
 * or the runtime image DockerRuntime builds, built on the local Docker engine from the base
 * image (reporting BUILDING_RUNTIME). Only a cluster that runs the local engine's images can use a
 * local build (Docker Desktop's, the test stand-in); for others docs/runtimes/kubernetes.md says
 * how to push one. The Docker modules are loaded only for a build, so dockerode stays optional.
 */
import { Effect, Layer } from "effect"
import { imageRequirements } from "../../runtimeImage/imageContext.ts"
import type { SandboxConfig } from "../../schema/SandboxConfig.ts"
import type { ProvisionStatus } from "../../services/Provisioner.ts"
import type { RuntimeOptions, RuntimeTools } from "../../services/RuntimeOptions.ts"

export const runtimeImage = Effect.fn("runtimeImage")(function*(
  options: RuntimeTools & Pick<RuntimeOptions, "env"> & {
    readonly image?: string | undefined
    readonly baseImage?: string | undefined
  },
  sandbox: SandboxConfig,
  user: { readonly name: string; readonly id: number },
  onStatus: (status: ProvisionStatus) => Effect.Effect<void>
) {
  const named = options.image ?? sandbox.runtimeContainerImage
  if (named !== null && named !== undefined) return named
  const [{ ImageBuilder }, { DockerEngine }] = yield* Effect.promise(() =>
    Promise.all([import("../docker/imageBuilder.ts"), import("../docker/engine.ts")])
  )
  return yield* Effect.gen(function*() {
    const builder = yield* ImageBuilder
    return yield* builder.ensure(
      {
        baseImage: options.baseImage ?? sandbox.baseContainerImage,
        userId: user.id,
        username: user.name,
        forceRebuild: sandbox.forceRebuildRuntime,
        requires: imageRequirements(options, sandbox)
      },
      onStatus("BUILDING_RUNTIME")
    )
  }).pipe(Effect.provide(ImageBuilder.layer.pipe(Layer.provide(DockerEngine.layer))))
})
