/**
 * The engine's dockerode client with dockerode's types, for the package's own calls. The public
 * `DockerEngine` names it structurally (`DockerClient`), so this module stays out of the
 * declarations consumers load: they need not have `@types/dockerode`.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { DockerEngine } from "./engine.ts"

export const dockerClient: Effect.Effect<Docker, never, DockerEngine> = Effect.gen(function*() {
  return (yield* DockerEngine).docker as Docker
})
